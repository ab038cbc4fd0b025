// The queue bench's two measurements over any enqueue path: throughput (many adds in flight,
// first add to last completed event) and one-job-at-a-time latency per stage.
import type { Redis } from 'ioredis';
import type { CompletionWatch, JobClock, Stage } from './job-tracker.js';
import { costPerJob, sampleCost, type PhaseCost } from './redis-stats.js';

/** One way of adding a job: returns the BullMQ job id. */
export interface QueuePath {
  readonly name: string;
  readonly watch: CompletionWatch;
  add(tag: number): Promise<string>;
}

/** One throughput phase. */
export interface Throughput {
  readonly jobsPerSec: number;
  readonly addsPerSec: number;
  readonly cost: PhaseCost;
}

/** A bound on any phase, so a stuck fleet fails the bench instead of hanging it. */
export const PHASE_TIMEOUT_MS = 180_000;

async function addAll(
  clock: JobClock,
  path: QueuePath,
  count: number,
  inflight: number,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      const tag = clock.add();
      clock.enqueued(tag, await path.add(tag));
    }
  };
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, lane));
}

/** Adds `count` jobs with `inflight` adds at once; jobs/s from the first add to the last done. */
export async function throughput(
  clock: JobClock,
  path: QueuePath,
  count: number,
  inflight: number,
  stats: Redis,
): Promise<Throughput> {
  const before = await sampleCost(stats);
  const done = path.watch.until(path.watch.completed + count, PHASE_TIMEOUT_MS);
  const started = performance.now();
  await addAll(clock, path, count, inflight);
  const added = performance.now();
  const finished = await done;
  const after = await sampleCost(stats);
  return {
    jobsPerSec: (count * 1e3) / (finished - started),
    addsPerSec: (count * 1e3) / (added - started),
    cost: costPerJob(before, after, count),
  };
}

/**
 * One job in flight at a time (add, wait for its completed event): latency with no backlog, as
 * ms since the add per stage.
 */
export async function oneAtATime(
  clock: JobClock,
  path: QueuePath,
  count: number,
): Promise<Map<Stage, number[]>> {
  const tags: number[] = [];
  for (let i = 0; i < count; i++) {
    const done = path.watch.until(path.watch.completed + 1, PHASE_TIMEOUT_MS);
    const tag = clock.add();
    tags.push(tag);
    clock.enqueued(tag, await path.add(tag));
    await done;
  }
  return clock.sinceAdded(tags, path.watch);
}
