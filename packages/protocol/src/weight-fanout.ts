import { z } from 'zod';
import { IdSchema } from './atoms.js';

/** The most workers one fan-out plan names (a chain longer than this is cut; the rest use the coordinator). */
export const MAX_FANOUT_WORKERS = 4096;

/**
 * A version record's fan-out plan is followed this long after the sync; a worker that loads the
 * version later (catching up) fetches from the coordinator, since the chain has moved on.
 */
export const FANOUT_PLAN_TTL_MS = 3_600_000;

/** How many earlier links of the chain a worker tries before the coordinator. */
export const FANOUT_PEER_SOURCES = 2;

/** A worker's peer server as a plan names it. */
export const FanoutPeerSchema = z.strictObject({
  workerId: IdSchema,
  /** Where peers reach its `GET /v1/blobs/:sha256` (the manifest's `peerUrl`). */
  peerUrl: z.url({ protocol: /^https?$/ }),
});
/** A worker's peer server as a plan names it. */
export type FanoutPeer = z.infer<typeof FanoutPeerSchema>;

/**
 * The coordinator's fan-out plan of one sync (the version record's `plan`, written with it): a
 * pipelined chain over the live workers that need the version. The first
 * link fetches from the coordinator; link i fetches each range from link i−1, then i−2 (up to
 * `FANOUT_PEER_SOURCES` back), then the coordinator, which can always serve everything. A worker
 * not in the chain fetches from the coordinator.
 */
export const FanoutPlanSchema = z.strictObject({
  chain: z.array(FanoutPeerSchema).max(MAX_FANOUT_WORKERS),
  /**
   * The most bytes one range request of a link asks for (a link serves a range on only once it
   * verified all of it, so smaller chunks pipeline deeper; a tensor larger than this is a range of
   * its own).
   */
  chunkBytes: z
    .int()
    .min(4096)
    .max(64 * 1024 * 1024),
});
/** A fan-out plan. */
export type FanoutPlan = z.infer<typeof FanoutPlanSchema>;

/**
 * The chain of `peers` (workers that need the version and serve peers) in a stable order (by
 * worker id), cut at MAX_FANOUT_WORKERS.
 */
export function fanoutChain(peers: readonly FanoutPeer[]): FanoutPeer[] {
  return [...peers]
    .sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0))
    .slice(0, MAX_FANOUT_WORKERS);
}

const MIN_CHUNK_BYTES = 256 * 1024;
const MAX_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The chunk size of a chain of `links` moving `sizeBytes`: a chain finishes in about
 * (S + N·c)/rate, so c = S/(4N) keeps it within 1.25× one link's time, clamped to
 * [256 KiB, 4 MiB] (smaller requests cost more than they pipeline).
 */
export function fanoutChunkBytes(sizeBytes: number, links: number): number {
  const ideal = Math.floor(sizeBytes / (4 * Math.max(1, links)));
  return Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, ideal));
}

/** The peers `workerId` fetches from, nearest first (empty: only the coordinator). */
export function fanoutSourcesOf(plan: FanoutPlan | undefined, workerId: string): FanoutPeer[] {
  if (plan === undefined) return [];
  const index = plan.chain.findIndex((peer) => peer.workerId === workerId);
  if (index <= 0) return [];
  return plan.chain.slice(Math.max(0, index - FANOUT_PEER_SOURCES), index).reverse();
}

/** The source name of the coordinator in an ack's `sources` and `fallbacks`. */
export const COORDINATOR_SOURCE = 'coordinator';

/** One time a worker left a source for the next one during a sync. */
export const SyncFallbackSchema = z.strictObject({
  /** The source it left: a peer's worker id. */
  from: IdSchema,
  /** The code of what went wrong (WORKER_PEER_CHUNK_INVALID: bytes that failed their digest). */
  code: z.string().min(1),
  reason: z.string().min(1).max(500),
});
/** One fallback of a sync. */
export type SyncFallback = z.infer<typeof SyncFallbackSchema>;

/** The most fallbacks an ack lists (the count is always whole). */
export const MAX_ACK_FALLBACKS = 16;
