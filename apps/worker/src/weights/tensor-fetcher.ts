import { createHash } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import { decodeCheckpointTensor } from '@flowfleet/models';
import type { TensorData } from '@flowfleet/platform';
import type { ManifestTensor, WeightBlob } from '@flowfleet/protocol';

/** Where byte ranges of blobs come from (the coordinator's `GET /v1/blobs/:sha256` with Range). */
export interface RangeSource {
  fetchRange(sha256: string, start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;
}

/** One tensor to fetch: its name here (the card's) and its manifest entry. */
export interface WantedTensor {
  readonly name: string;
  readonly key: string;
  readonly tensor: ManifestTensor;
}

/** What a fetch brought: the decoded tensors by name, and the bytes it moved. */
export interface FetchedTensors {
  readonly tensors: Map<string, TensorData>;
  readonly fetchedBytes: number;
}

/** Options of `fetchTensors`. */
export interface FetchTensorsOptions {
  /** Contiguous tensors are fetched in one request up to this many bytes (default 64 MiB). */
  readonly maxRequestBytes?: number;
  readonly signal?: AbortSignal;
  /** For messages: which version the tensors belong to. */
  readonly what: string;
}

const DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024;

/** Tensors of one shard that lie end to end, fetched as one range. */
interface RangeRequest {
  readonly shard: number;
  readonly begin: number;
  end: number;
  readonly tensors: WantedTensor[];
}

/**
 * Groups the wanted tensors into range requests: per shard in file order, a run of tensors that
 * lie end to end goes in one request while it stays under `maxBytes` (a larger tensor is a
 * request of its own).
 */
export function planRanges(wanted: readonly WantedTensor[], maxBytes: number): RangeRequest[] {
  const sorted = [...wanted].sort(
    (a, b) => a.tensor.shard - b.tensor.shard || a.tensor.begin - b.tensor.begin,
  );
  const requests: RangeRequest[] = [];
  for (const item of sorted) {
    const { shard, begin, end } = item.tensor;
    const last = requests.at(-1);
    if (
      last !== undefined &&
      last.shard === shard &&
      last.end === begin &&
      end - last.begin <= maxBytes
    ) {
      last.end = end;
      last.tensors.push(item);
    } else {
      requests.push({ shard, begin, end, tensors: [item] });
    }
  }
  return requests;
}

function refused(what: string, message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('WORKER_BLOB_REFUSED', `${what}: ${message}`, {
    details: { reason: 'tensor-sha256', ...details },
  });
}

/**
 * Fetches tensors as byte ranges of their shards, one request at a time (so at most one range is
 * in memory besides the decoded tensors), verifies each tensor's bytes against its manifest
 * sha256 and widens it to float32 (F16, BF16) — nothing is returned unless every tensor verified.
 * An empty tensor needs no bytes.
 * @throws FlowfleetError WORKER_BLOB_REFUSED (`reason: 'tensor-sha256'`) on a tensor whose bytes
 *   do not match; the source's errors (a failed or short fetch) as they are
 */
export async function fetchTensors(
  source: RangeSource,
  shards: readonly WeightBlob[],
  wanted: readonly WantedTensor[],
  options: FetchTensorsOptions,
): Promise<FetchedTensors> {
  const tensors = new Map<string, TensorData>();
  let fetchedBytes = 0;
  const empty = wanted.filter((item) => item.tensor.end === item.tensor.begin);
  const ranges = planRanges(
    wanted.filter((item) => item.tensor.end > item.tensor.begin),
    options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
  );
  for (const item of empty) ranges.push({ ...item.tensor, tensors: [item] });
  for (const request of ranges) {
    const shard = shards[request.shard];
    if (shard === undefined) {
      throw refused(options.what, `the manifest names shard ${request.shard}, which it lacks`, {
        shard: request.shard,
      });
    }
    const bytes =
      request.end === request.begin
        ? new Uint8Array(0)
        : await source.fetchRange(shard.sha256, request.begin, request.end, options.signal);
    fetchedBytes += bytes.byteLength;
    for (const { name, key, tensor } of request.tensors) {
      const raw = bytes.subarray(tensor.begin - request.begin, tensor.end - request.begin);
      const actual = createHash('sha256').update(raw).digest('hex');
      if (actual !== tensor.sha256) {
        throw refused(
          options.what,
          `tensor ${key}: sha256 ${actual} does not match the manifest's ${tensor.sha256}`,
          { tensor: key, shard: request.shard, sha256: actual, expectedSha256: tensor.sha256 },
        );
      }
      tensors.set(name, decodeCheckpointTensor(key, tensor, raw));
    }
  }
  return { tensors, fetchedBytes };
}
