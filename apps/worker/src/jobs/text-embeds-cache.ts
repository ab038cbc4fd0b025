import { createHash } from 'node:crypto';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { bfloat16ToFloat32, float16ToFloat32, readSafetensors } from '@flowfleet/formats';
import type {
  ResolvedSamplingRequest,
  TextEmbedding,
  TextEmbeddings,
  TextEmbedsRef,
} from '@flowfleet/models';
import type { Logger } from 'pino';

/** Where embedding blobs come from (the coordinator's `GET /v1/blobs/:sha256`). */
export interface EmbedsBlobSource {
  fetchBlob(sha256: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
}

/** Options of a TextEmbedsCache. */
export interface TextEmbedsCacheOptions {
  readonly source: EmbedsBlobSource;
  /** The most float32 bytes the cache keeps (least recently used go first; default 256 MiB). */
  readonly maxBytes?: number;
  /** The largest blob fetched (default 64 MiB: 512 × 4096 F32 is 8 MiB). */
  readonly maxBlobBytes?: number;
  readonly logger?: Logger;
}

const MiB = 1024 * 1024;

function refused(
  ref: TextEmbedsRef,
  rule: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
): FlowfleetError {
  return new FlowfleetError('WORKER_EMBEDS_INVALID', `embedding ${ref.sha256}: ${message}`, {
    details: { sha256: ref.sha256, rule, ...extra },
  });
}

/**
 * A worker's text embeddings by sha256: fetched once, checked (the bytes hash to the name, one
 * F32/BF16/F16 tensor `[L, dim]`, every value finite), widened to float32 and kept, least recently
 * used first out past `maxBytes` — so a group of G seeds, or G single-seed jobs of one prompt,
 * fetch the prompt's embedding once per worker. Concurrent loads of one sha256 share a fetch. A
 * refused blob is never cached. Zero-padding is the card's (its loop pads to its text length).
 */
export class TextEmbedsCache {
  readonly #options: TextEmbedsCacheOptions;
  readonly #maxBytes: number;
  readonly #entries = new Map<string, TextEmbedding>();
  readonly #loading = new Map<string, Promise<TextEmbedding>>();
  #bytes = 0;
  #fetches = 0;

  constructor(options: TextEmbedsCacheOptions) {
    this.#options = options;
    this.#maxBytes = options.maxBytes ?? 256 * MiB;
  }

  /** Float32 bytes the cache holds now (the worker reports it in its heartbeat → `/metrics`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Blob fetches so far (a hit fetches nothing). */
  get fetches(): number {
    return this.#fetches;
  }

  /**
   * The embeddings a resolved request names (the negative prompt's only when CFG runs), or
   * undefined when it names none.
   * @throws FlowfleetError WORKER_EMBEDS_INVALID; the source's errors (a fetch that failed)
   */
  async load(
    request: Pick<ResolvedSamplingRequest, 'promptEmbeds' | 'negativePromptEmbeds' | 'cfg'>,
    signal?: AbortSignal,
  ): Promise<TextEmbeddings | undefined> {
    if (request.promptEmbeds === undefined) return undefined;
    const prompt = await this.#get(request.promptEmbeds, signal);
    const negative =
      request.cfg && request.negativePromptEmbeds !== undefined
        ? await this.#get(request.negativePromptEmbeds, signal)
        : undefined;
    return { prompt, ...(negative === undefined ? {} : { negativePrompt: negative }) };
  }

  async #get(ref: TextEmbedsRef, signal: AbortSignal | undefined): Promise<TextEmbedding> {
    const hit = this.#entries.get(ref.sha256);
    if (hit !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.#entries.delete(ref.sha256);
      this.#entries.set(ref.sha256, hit);
      return hit;
    }
    let loading = this.#loading.get(ref.sha256);
    if (loading === undefined) {
      loading = this.#fetch(ref, signal).finally(() => this.#loading.delete(ref.sha256));
      this.#loading.set(ref.sha256, loading);
    }
    return loading;
  }

  async #fetch(ref: TextEmbedsRef, signal: AbortSignal | undefined): Promise<TextEmbedding> {
    this.#fetches++;
    const bytes = await this.#options.source.fetchBlob(
      ref.sha256,
      this.#options.maxBlobBytes ?? 64 * MiB,
      signal,
    );
    const embedding = decodeEmbedding(ref, bytes);
    this.#keep(ref.sha256, embedding);
    return embedding;
  }

  #keep(sha256: string, embedding: TextEmbedding): void {
    const size = embedding.data.byteLength;
    if (size > this.#maxBytes) return;
    this.#entries.set(sha256, embedding);
    this.#bytes += size;
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(key);
      this.#bytes -= entry.data.byteLength;
      this.#options.logger?.debug({ sha256: key }, 'evicted a text embedding from the cache');
    }
  }
}

/**
 * One embedding blob's bytes as a float32 `[L, dim]` embedding.
 * @throws FlowfleetError WORKER_EMBEDS_INVALID when the bytes are not the named blob, not one
 *   F32/BF16/F16 matrix, or hold a NaN or ±Inf
 */
export function decodeEmbedding(ref: TextEmbedsRef, bytes: Uint8Array): TextEmbedding {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== ref.sha256) throw refused(ref, 'sha256', `the bytes hash to ${actual}`);
  let tensors;
  try {
    tensors = readSafetensors(bytes).tensors;
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    throw refused(ref, 'safetensors', error.message);
  }
  const [entry, ...rest] = tensors.values();
  if (entry === undefined || rest.length > 0 || entry.shape.length !== 2) {
    throw refused(ref, 'one-matrix', 'expected one tensor [L, dim]', { tensors: tensors.size });
  }
  const [tokens = 0, dim = 0] = entry.shape;
  let data: Float32Array;
  if (entry.dtype === 'F32') data = Float32Array.from(entry.data as Float32Array);
  else if (entry.dtype === 'BF16') data = bfloat16ToFloat32(entry.data as Uint16Array);
  else if (entry.dtype === 'F16') data = float16ToFloat32(entry.data as Uint16Array);
  else throw refused(ref, 'dtype', `dtype ${entry.dtype}`, { dtype: entry.dtype });
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i]!)) {
      throw refused(ref, 'finite', `value ${i} (row ${Math.floor(i / dim)}) is ${data[i]}`, {
        index: i,
        row: Math.floor(i / dim),
      });
    }
  }
  return { tokens, dim, data };
}
