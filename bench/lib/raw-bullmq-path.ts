// The queue bench's baseline: raw BullMQ on the same Redis — a Queue, `workers` × Worker with
// `concurrency` and a no-op processor, the coordinator's job options (attempts, backoff,
// retention) and the lock settings of a flowfleet worker, and a payload of the same shape.
import { randomUUID } from 'node:crypto';
import { JOB_ATTEMPTS, JOB_RETENTION_SECONDS } from '@flowfleet/coordinator';
import type { Requirements, RolloutJob, RolloutRequest } from '@flowfleet/protocol';
import { Queue, Worker } from 'bullmq';
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

const QUEUE_NAME = 'bench-raw';

/** Starts the raw queue and workers; everything is registered with `teardown`. */
export async function startRawPath(options: RawPathOptions): Promise<QueuePath> {
  const { redisUrl, clock, teardown } = options;
  const prefix = benchPrefix('raw');
  const bullPrefix = `{${prefix}}:bull`;
  teardown.add('raw keys', () => deletePrefix(redisUrl, prefix));
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  teardown.add('raw connection', async () => connection.disconnect());
  const queue = new Queue(QUEUE_NAME, { connection, prefix: bullPrefix });
  teardown.add('raw queue', () => queue.close());
  const workers = Array.from(
    { length: options.workers },
    () =>
      new Worker<RolloutJob>(
        QUEUE_NAME,
        async (job) => {
          const tag = tagOf(job.data.request.prompt);
          if (tag !== undefined) clock.stamp(tag, 'started');
          return { ok: true };
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
  teardown.add('raw workers', () => Promise.all(workers.map((worker) => worker.close())));
  const watch = await CompletionWatch.open(redisUrl, QUEUE_NAME, bullPrefix);
  teardown.add('raw events', () => watch.close());
  return {
    name: 'raw BullMQ',
    watch,
    async add(tag) {
      const id = randomUUID();
      const data: RolloutJob = {
        id,
        lane: QUEUE_NAME,
        request: { ...options.request, prompt: promptOf(tag) },
        requirements: options.requirements,
        enqueuedAt: new Date().toISOString(),
      };
      await queue.add('rollout', data, {
        jobId: id,
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: JOB_RETENTION_SECONDS },
        removeOnFail: { age: JOB_RETENTION_SECONDS },
      });
      return id;
    },
  };
}
