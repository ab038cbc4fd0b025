import { FlowfleetError } from '@flowfleet/errors';
import type { TextEmbeddingSpec } from '@flowfleet/models';
import type { RolloutRequest } from '@flowfleet/protocol';
import type { BlobStore } from './blob-store.js';

/** The safetensors dtypes an embedding may be stored in (umT5 runs in bf16; f32 and f16 too). */
export const TEXT_EMBEDS_DTYPES: readonly string[] = Object.freeze(['F32', 'BF16', 'F16']);

const FIELDS = ['promptEmbeds', 'negativePromptEmbeds'] as const;

function invalid(
  field: string,
  sha256: string,
  rule: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
): FlowfleetError {
  return new FlowfleetError('API_EMBEDS_INVALID', `${field}: ${message}; nothing was enqueued`, {
    details: { field, sha256, rule, ...extra },
  });
}

/**
 * Checks at the edge, before the 202, each text embedding a resolved request names: the blob is
 * in the store, and its header (taken by formats' safetensors digester when it was uploaded) is
 * one tensor `[L, spec.dim]` of F32, BF16 or F16 with 1 ≤ L ≤ `spec.maxTokens`. The values are the
 * worker's to check (finite) — reading 4 MB per prompt here would put the bytes on the edge's path.
 * @throws FlowfleetError API_EMBEDS_NOT_FOUND, API_EMBEDS_INVALID naming the field
 */
export async function checkTextEmbeds(
  spec: TextEmbeddingSpec | undefined,
  request: Pick<RolloutRequest, 'promptEmbeds' | 'negativePromptEmbeds'>,
  blobs: Pick<BlobStore, 'blobDigest'>,
): Promise<void> {
  if (spec === undefined) return;
  for (const field of FIELDS) {
    const ref = request[field];
    if (ref === undefined) continue;
    const digest = await blobs.blobDigest(ref.sha256);
    if (digest === undefined) {
      throw new FlowfleetError(
        'API_EMBEDS_NOT_FOUND',
        `${field}: no blob ${ref.sha256} in the store (upload it with PUT /v1/blobs first); nothing was enqueued`,
        { details: { field, sha256: ref.sha256 } },
      );
    }
    if (digest.tensors === null) {
      throw invalid(field, ref.sha256, 'safetensors', 'the blob is not a safetensors file', {
        reason: digest.invalid?.reason ?? null,
      });
    }
    const entries = Object.entries(digest.tensors);
    if (entries.length !== 1) {
      throw invalid(
        field,
        ref.sha256,
        'one-tensor',
        `expected one tensor, found ${entries.length}`,
        {
          tensors: entries.map(([name]) => name),
        },
      );
    }
    const [name, tensor] = entries[0]!;
    if (!TEXT_EMBEDS_DTYPES.includes(tensor.dtype)) {
      throw invalid(field, ref.sha256, 'dtype', `tensor ${name} is ${tensor.dtype}`, {
        dtype: tensor.dtype,
        allowed: [...TEXT_EMBEDS_DTYPES],
      });
    }
    const [tokens = 0, dim] = tensor.shape;
    if (tensor.shape.length !== 2 || dim !== spec.dim || tokens < 1 || tokens > spec.maxTokens) {
      throw invalid(
        field,
        ref.sha256,
        'dims',
        `tensor ${name} is [${tensor.shape.join(', ')}], expected [L, ${spec.dim}] with 1 ≤ L ≤ ${spec.maxTokens}`,
        { shape: [...tensor.shape], dim: spec.dim, maxTokens: spec.maxTokens },
      );
    }
  }
}
