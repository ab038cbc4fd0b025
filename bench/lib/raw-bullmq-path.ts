// The queue bench's baseline: raw BullMQ on the same Redis — a Queue, `workers` × Worker with
// `concurrency` and a no-op processor, the coordinator's job options (attempts, backoff,
// retention) and the lock settings of a flowfleet worker, and a payload of the same shape.
import { randomUUID } from 'node:crypto';
import { JOB_ATTEMPTS, JOB_RETENTION_SECONDS } from '@flowfleet/coordinator';
import type { Requirements, RolloutJob, RolloutRequest } from '@flowfleet/protocol';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { benchPrefix, deletePrefix } from './bench-fleet.js';
import { CompletionWatch, promptOf, tagOf, type JobClock } from './job-tracker.js';
import type { QueuePath } from './queue-phases.js';
import type { Teardown } from './teardown.js';

/** What the raw path is built from. */
export interface RawPathOptions {
  readonly redisUrl: string;
  readonly workers: number;
  readonly concurrency: number;
  /** A parsed request and its requirements: the payload template. */
  readonly request: RolloutRequest;
  readonly requirements: Requirements;
  readonly clock: JobClock;
  readonly teardown: Teardown;
}

/** A raw BullMQ queue and its workers, set up as both baselines need them. */
export interface RawQueue {
  readonly watch: CompletionWatch;
  /** The payload of job `tag` under a fresh id: the shape ours enqueues. */
  payload(tag: number): RolloutJob;
  /** Adds a payload with the coordinator's job options (attempts, backoff, retention). */
  add(data: RolloutJob): Promise<void>;
}

/**
 * Starts queue `name` under its own prefix with `options.workers` × Worker (concurrency and lock
 * settings of a flowfleet worker) whose processor stamps the job's start, then runs `work`.
 * Everything is registered with `options.teardown`.
 */
export async function startRawQueue(
  options: RawPathOptions,
  name: string,
  work: (job: Job<RolloutJob>) => Promise<unknown>,
): Promise<RawQueue> {
  const { redisUrl, clock, teardown } = options;
  const prefix = benchPrefix(name);
  const bullPrefix = `{${prefix}}:bull`;
  teardown.add(`${name} keys`, () => deletePrefix(redisUrl, prefix));
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  teardown.add(`${name} connection`, async () => connection.disconnect());
  const queue = new Queue(name, { connection, prefix: bullPrefix });
  teardown.add(`${name} queue`, () => queue.close());
  const workers = Array.from(
    { length: options.workers },
    () =>
      new Worker<RolloutJob>(
        name,
        async (job) => {
          const tag = tagOf(job.data.request.prompt);
          if (tag !== undefined) clock.stamp(tag, 'started');
          return work(job);
        },
        {
          connection,
          prefix: bullPrefix,
          concurrency: options.concurrency,
          lockDuration: 30_000,
          stalledInterval: 15_000,
          maxStalledCount: 3,
        },
      ),
  );
  teardown.add(`${name} workers`, () => Promise.all(workers.map((worker) => worker.close())));
  const watch = await CompletionWatch.open(redisUrl, name, bullPrefix);
  teardown.add(`${name} events`, () => watch.close());
  return {
    watch,
    payload: (tag) => ({
      id: randomUUID(),
      lane: name,
      request: { ...options.request, prompt: promptOf(tag) },
      requirements: options.requirements,
      enqueuedAt: new Date().toISOString(),
    }),
    async add(data) {
      await queue.add('rollout', data, {
        jobId: data.id,
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: JOB_RETENTION_SECONDS },
        removeOnFail: { age: JOB_RETENTION_SECONDS },
      });
    },
  };
}

/** Starts the raw path: Queue.add, and workers with a no-op processor. */
export async function startRawPath(options: RawPathOptions): Promise<QueuePath> {
  const raw = await startRawQueue(options, 'bench-raw', () => Promise.resolve({ ok: true }));
  return {
    name: 'raw BullMQ',
    watch: raw.watch,
    async add(tag) {
      const data = raw.payload(tag);
      await raw.add(data);
      return data.id;
    },
  };
}
