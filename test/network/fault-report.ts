// The tally every fault test reports and asserts: jobs accepted, completed, lost, duplicated and
// mismatched, read from the coordinator (status, result bytes), BullMQ (every job in the lanes)
// and the blob store (every result directory).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import type { RedisClient } from '@flowfleet/redis';
import { Queue } from 'bullmq';
import { TOKENS } from '../worker/fleet-fixture.js';
import type { NetFleet } from './net-fleet.js';

/** One accepted enqueue. */
export interface AcceptedJob {
  readonly id: string;
  readonly lane: string;
}

/** What became of the accepted jobs. */
export interface FaultReport {
  readonly accepted: number;
  readonly completed: number;
  /** Accepted and not completed. */
  readonly lost: number;
  /** Jobs in the lanes or results in the store beyond the accepted ones. */
  readonly duplicated: number;
  /** Completed with result bytes other than the expected ones (where expected bytes are given). */
  readonly mismatched: number;
}

/** What the tally reads: a net fleet, or any fleet that offers the same (a sentinel-mode one). */
export type FaultSource = Pick<
  NetFleet,
  'status' | 'fetch' | 'coordinatorUrl' | 'prefix' | 'blobDir'
> & {
  readonly redis: RedisClient;
};

/**
 * Tallies `accepted` (call it once the test waited for completion). `expected` maps a job id to
 * the result bytes an undisturbed run produced.
 */
export async function faultReport(
  fleet: FaultSource,
  accepted: readonly AcceptedJob[],
  expected: ReadonlyMap<string, Uint8Array> = new Map(),
): Promise<FaultReport> {
  const ids = new Set(accepted.map((job) => job.id));
  let completed = 0;
  let mismatched = 0;
  for (const { id } of accepted) {
    // A job Redis lost (a failover) has no status at all.
    const status = await fleet.status(id).catch(() => undefined);
    if (status?.status !== 'completed') continue;
    completed += 1;
    const want = expected.get(id);
    if (want === undefined) continue;
    const answer = await fleet.fetch(`${fleet.coordinatorUrl}/v1/rollouts/${id}/result`, {
      headers: { authorization: `Bearer ${TOKENS.viewer}` },
    });
    const got = Buffer.from(await answer.arrayBuffer());
    if (!got.equals(Buffer.from(want))) mismatched += 1;
  }
  let inLanes = 0;
  const keys = coordinatorKeys(fleet.prefix);
  for (const lane of new Set(accepted.map((job) => job.lane))) {
    const queue = new Queue(lane, { connection: fleet.redis, prefix: keys.laneBullPrefix(lane) });
    try {
      const counts = await queue.getJobCounts();
      inLanes += Object.values(counts).reduce((sum, count) => sum + count, 0);
    } finally {
      await queue.close();
    }
  }
  const resultDirs = await readdir(join(fleet.blobDir, 'results')).catch(() => [] as string[]);
  const strayResults = resultDirs.filter((dir) => !ids.has(dir)).length;
  const report: FaultReport = {
    accepted: ids.size,
    completed,
    lost: ids.size - completed,
    duplicated: Math.max(0, inLanes - ids.size) + strayResults,
    mismatched,
  };
  // The figures a reader of the CI log wants, one line per fault test.
  console.log(`fault report ${JSON.stringify(report)}`);
  return report;
}
