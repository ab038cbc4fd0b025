import { createHash } from 'node:crypto';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { decodeCheckpointTensor } from '@flowfleet/models';
import type { TensorData } from '@flowfleet/platform';
import { COORDINATOR_SOURCE, type ManifestTensor, type WeightBlob } from '@flowfleet/protocol';

/** Where byte ranges of blobs come from (the coordinator's `GET /v1/blobs/:sha256` with Range). */
export interface RangeSource {
  fetchRange(sha256: string, start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;
}

/** A peer a range may come from before the coordinator (ADR 009): its worker id and client. */
export interface PeerRangeSource extends RangeSource {
  readonly name: string;
}

/** Told what a fetch does, so verified bytes can be served on and the ack can say where they came from. */
export interface FetchObserver {
  /** Before any request: the ranges the fetch will ask for. */
  planned(ranges: readonly { sha256: string; begin: number; end: number }[]): void;
  /** A range whose every tensor verified, from `source` (a peer's name or `coordinator`). */
  verified(sha256: string, begin: number, bytes: Uint8Array, source: string): void;
  /** A peer's answer was not used: it failed, or its bytes failed their digest (never adopted). */
  fellBack(peer: string, error: FlowfleetError): void;
}

/** One tensor to fetch: its name here (the card's) and its manifest entry. */
export interface NeededTensor {
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
  /**
   * Contiguous tensors are fetched in one request up to this many bytes (default 8 MiB: a request
   * must finish within the transport timeout, 30 s, on a link shared by many workers).
   */
  readonly maxRequestBytes?: number;
  readonly signal?: AbortSignal;
  /** For messages: which version the tensors belong to. */
  readonly what: string;
  /** Tried in order for each range before `source` (the coordinator, the source of truth). */
  readonly peers?: readonly PeerRangeSource[];
  readonly observer?: FetchObserver;
}

/** A peer that failed so that asking it again is pointless (dead, hostile) is dropped for the fetch. */
const DROP_PEER_ON: ReadonlySet<string> = new Set([
  'WORKER_PEER_CHUNK_INVALID',
  'CLIENT_UNREACHABLE',
  'CLIENT_TIMEOUT',
  'CLIENT_BAD_RESPONSE',
  'WORKER_PEER_UNAUTHORIZED',
]);

const DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/** Tensors of one shard that lie end to end, fetched as one range. */
interface RangeRequest {
  readonly shard: number;
  readonly begin: number;
  end: number;
  readonly tensors: NeededTensor[];
}

/**
 * Groups the needed tensors into range requests: per shard in file order, a run of tensors that
 * lie end to end goes in one request while it stays under `maxBytes` (a larger tensor is a
 * request of its own).
 */
export function planRanges(needed: readonly NeededTensor[], maxBytes: number): RangeRequest[] {
  const sorted = [...needed].sort(
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

/** The tensors of `request` decoded from `bytes`, or the first that fails its digest. */
function verifyRange(
  request: RangeRequest,
  bytes: Uint8Array,
): { tensors: Map<string, TensorData> } | { bad: NeededTensor; sha256: string } {
  const tensors = new Map<string, TensorData>();
  for (const item of request.tensors) {
    const { tensor, key, name } = item;
    const raw = bytes.subarray(tensor.begin - request.begin, tensor.end - request.begin);
    const actual = createHash('sha256').update(raw).digest('hex');
    if (actual !== tensor.sha256) return { bad: item, sha256: actual };
    tensors.set(name, decodeCheckpointTensor(key, tensor, raw));
  }
  return { tensors };
}

/**
 * Fetches tensors as byte ranges of their shards, one request at a time (so at most one range is
 * in memory besides the decoded tensors), verifies each tensor's bytes against its manifest
 * sha256 and widens it to float32 (F16, BF16) — nothing is returned unless every tensor verified.
 * Each range is asked of `options.peers` in order, then of `source`: a peer that fails or serves
 * bytes that fail a digest is left for the next source (its bytes are never adopted); only the
 * last source's failures are the fetch's. An empty tensor needs no bytes.
 * @throws FlowfleetError WORKER_BLOB_REFUSED (`reason: 'tensor-sha256'`) on a tensor whose bytes
 *   from `source` do not match; the source's errors (a failed or short fetch) as they are
 */
export async function fetchTensors(
  source: RangeSource,
  shards: readonly WeightBlob[],
  needed: readonly NeededTensor[],
  options: FetchTensorsOptions,
): Promise<FetchedTensors> {
  const tensors = new Map<string, TensorData>();
  let fetchedBytes = 0;
  const empty = needed.filter((item) => item.tensor.end === item.tensor.begin);
  const ranges = planRanges(
    needed.filter((item) => item.tensor.end > item.tensor.begin),
    options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
  );
  for (const request of ranges) {
    if (shards[request.shard] === undefined) {
      throw refused(options.what, `the manifest names shard ${request.shard}, which it lacks`, {
        shard: request.shard,
      });
    }
  }
  const { observer } = options;
  observer?.planned(
    ranges.map((r) => ({ sha256: shards[r.shard]!.sha256, begin: r.begin, end: r.end })),
  );
  for (const item of empty) ranges.push({ ...item.tensor, tensors: [item] });
  const peers = [...(options.peers ?? [])];
  for (const request of ranges) {
    const shard = shards[request.shard];
    if (shard === undefined) {
      throw refused(options.what, `the manifest names shard ${request.shard}, which it lacks`, {
        shard: request.shard,
      });
    }
    let done = false;
    for (const peer of request.end === request.begin ? [] : [...peers]) {
      options.signal?.throwIfAborted();
      let bytes: Uint8Array;
      try {
        bytes = await peer.fetchRange(shard.sha256, request.begin, request.end, options.signal);
      } catch (error) {
        options.signal?.throwIfAborted();
        if (!isFlowfleetError(error)) throw error;
        observer?.fellBack(peer.name, error);
        if (DROP_PEER_ON.has(error.code)) peers.splice(peers.indexOf(peer), 1);
        continue;
      }
      const checked = verifyRange(request, bytes);
      if ('bad' in checked) {
        observer?.fellBack(
          peer.name,
          new FlowfleetError(
            'WORKER_PEER_CHUNK_INVALID',
            `peer ${peer.name} served tensor ${checked.bad.key} as sha256 ${checked.sha256}, not the manifest's ${checked.bad.tensor.sha256}`,
            { details: { peer: peer.name, tensor: checked.bad.key, sha256: checked.sha256 } },
          ),
        );
        peers.splice(peers.indexOf(peer), 1);
        continue;
      }
      for (const [name, tensor] of checked.tensors) tensors.set(name, tensor);
      fetchedBytes += bytes.byteLength;
      observer?.verified(shard.sha256, request.begin, bytes, peer.name);
      done = true;
      break;
    }
    if (done) continue;
    const bytes =
      request.end === request.begin
        ? new Uint8Array(0)
        : await source.fetchRange(shard.sha256, request.begin, request.end, options.signal);
    const checked = verifyRange(request, bytes);
    if ('bad' in checked) {
      const { bad, sha256 } = checked;
      throw refused(
        options.what,
        `tensor ${bad.key}: sha256 ${sha256} does not match the manifest's ${bad.tensor.sha256}`,
        { tensor: bad.key, shard: request.shard, sha256, expectedSha256: bad.tensor.sha256 },
      );
    }
    for (const [name, tensor] of checked.tensors) tensors.set(name, tensor);
    fetchedBytes += bytes.byteLength;
    observer?.verified(shard.sha256, request.begin, bytes, COORDINATOR_SOURCE);
  }
  return { tensors, fetchedBytes };
}
