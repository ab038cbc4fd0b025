import { FlowfleetError } from '@flowfleet/errors';
import { float32ToBfloat16, float32ToFloat16, writeSafetensors } from '@flowfleet/formats';
import type { StoredBlob } from '@flowfleet/protocol';

/** One prompt's embedding `[tokens, dim]` row-major float32, cut to its true token count. */
export interface PromptEmbedding {
  readonly tokens: number;
  readonly dim: number;
  readonly data: Float32Array;
}

/** What uploads a blob (FlowfleetClient satisfies it). */
export interface BlobUploader {
  uploadBlob(bytes: Uint8Array): Promise<StoredBlob>;
}

/**
 * Uploads each embedding as a one-tensor safetensors blob (`prompt_embeds`, stored as `dtype`:
 * BF16 by default, umT5's own; F16 and F32 too) and returns, in order, the references a rollout
 * request takes (`promptEmbeds`, `negativePromptEmbeds`). Content-addressed: the same embedding
 * gives the same reference.
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS (an empty embedding, data of another size), the
 *   upload's codes (the coordinator checks the dims against the request's card at enqueue)
 */
export async function uploadPromptEmbeds(
  client: BlobUploader,
  embeddings: readonly PromptEmbedding[],
  dtype: 'F32' | 'BF16' | 'F16' = 'BF16',
): Promise<{ sha256: string }[]> {
  const refs: { sha256: string }[] = [];
  for (const [i, { tokens, dim, data }] of embeddings.entries()) {
    if (
      !Number.isInteger(tokens) ||
      tokens < 1 ||
      !Number.isInteger(dim) ||
      dim < 1 ||
      data.length !== tokens * dim
    ) {
      throw new FlowfleetError(
        'CLIENT_INVALID_OPTIONS',
        `embedding ${i} is [${tokens}, ${dim}] with ${data.length} values; expected [L, dim], L ≥ 1 (the card's limits are checked by the coordinator)`,
        { details: { option: 'embeddings', index: i } },
      );
    }
    const shape = [tokens, dim];
    const tensor =
      dtype === 'F32'
        ? { dtype, shape, data }
        : dtype === 'BF16'
          ? { dtype, shape, data: float32ToBfloat16(data) }
          : { dtype, shape, data: float32ToFloat16(data) };
    const stored = await client.uploadBlob(writeSafetensors({ prompt_embeds: tensor }));
    refs.push({ sha256: stored.sha256 });
  }
  return refs;
}
