// Running jobs: the process-wide concurrency cap across lanes, per-step progress, registration,
// untrusted payloads, and graceful shutdown.
import { coordinatorKeys } from '@flowfleet/coordinator';
import {
  ErrorEnvelopeSchema,
  WorkerHeartbeatSchema,
  WorkerManifestSchema,
} from '@flowfleet/protocol';
import { LOAD_BEAT_INTERVAL_MS } from '@flowfleet/worker';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { RedisClient } from '@flowfleet/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { addJob, laneEvents, recordLane, requirementsOf } from './direct-jobs.js';
import { startTestFleet, tinyRollout, waitUntil } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** The progress a job reported, in order, from its lane's BullMQ event stream. */
async function progressEvents(
  redis: RedisClient,
  prefix: string,
  lane: string,
  id: string,
): Promise<unknown[]> {
  return (await laneEvents(redis, prefix, lane))
    .filter((event) => event['event'] === 'progress' && event['jobId'] === id)
    .map((event) => JSON.parse(event['data'] ?? 'null') as unknown);
}

/** The most intervals [start, end] that overlap at any instant. */
function maxOverlap(intervals: readonly (readonly [number, number])[]): number {
  const edges = intervals.flatMap(([start, end]) => [[start, 1] as const, [end, -1] as const]);
  // At equal times an end comes first: back-to-back jobs do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) {
    open += delta;
    most = Math.max(most, open);
  }
  return most;
}

describe('running jobs', () => {
  it('never runs more than its concurrency across lanes, and fills it', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-cap');
    try {
      // Queued before any worker exists, so the worker starts with a backlog in every lane.
      const bodies = [
        tinyRollout(),
        tinyRollout({ sampler: 'ode' }),
        tinyRollout({ guidanceScale: 1 }),
      ];
      // Three lanes, three jobs, two slots: one job must wait although its lane is idle.
      const jobs: { id: string; lane: string }[] = [];
      for (const body of bodies) jobs.push(await fleet.enqueue({ ...body, waitForCapacity: true }));
      expect(new Set(jobs.map((job) => job.lane)).size).toBe(3);
      const worker = await fleet.startWorker({ concurrency: 2 });
      for (const { id } of jobs) await fleet.waitForCompletion(id);
      // BullMQ's own record: when each job became active and when it finished.
      const intervals: [number, number][] = [];
      for (const { id, lane } of jobs) {
        const queue = new Queue(lane, {
          connection: fleet.redis,
          prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(lane),
        });
        const job = await queue.getJob(id);
        await queue.close();
        intervals.push([job?.processedOn ?? 0, job?.finishedOn ?? 0]);
      }
      // BullMQ holds a job active until its result is stored, and a job's upload overlaps the
      // next rollout: at most `concurrency` computing plus as many storing.
      expect(maxOverlap(intervals)).toBeLessThanOrEqual(4);
      // The compute itself never exceeds the cap, and fills it.
      expect(worker.stats().maxActiveJobs).toBe(2);
      expect(worker.stats().lanes).toHaveLength(3);
    } finally {
      await fleet.close();
    }
  });

  it('runs the request contract a FlowGRPO trainer needs: negative prompt and named CFG rule', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-contract');
    try {
      await fleet.startWorker();
      // w = 0.5: the default rule runs the unconditional branch (on the negative prompt), the
      // diffusers/flow_grpo rule does not — a different trajectory, and a lane without cfg_combine.
      const body = tinyRollout({ guidanceScale: 0.5, negativePrompt: 'blurry, low quality' });
      const unless = await fleet.enqueue(body);
      const above = await fleet.enqueue({ ...body, cfgRule: 'above-one' });
      const empty = await fleet.enqueue({ ...body, negativePrompt: '' });
      const lanes = new Map(
        (
          (await (await fleet.api('/v1/lanes')).json()) as {
            lanes: { lane: string; requirements: { ops: string[] } }[];
          }
        ).lanes.map((lane) => [lane.lane, lane.requirements.ops]),
      );
      expect(lanes.get(unless.lane)).toContain('cfg_combine');
      expect(lanes.get(above.lane)).not.toContain('cfg_combine');
      const summaries = [];
      for (const { id } of [unless, above, empty]) {
        summaries.push((await fleet.waitForCompletion(id)).summary!);
      }
      const [s1, s2, s3] = summaries;
      expect(s1).toMatchObject({ negativePrompt: 'blurry, low quality', cfgRule: 'unless-one' });
      expect(s2).toMatchObject({ cfgRule: 'above-one' });
      expect(s3).toMatchObject({ negativePrompt: '' });
      // Each choice changes the trajectory: the negative prompt conditions the unconditional branch.
      const finals = await Promise.all(
        [unless, above, empty].map(async ({ id }) => Buffer.from(await fleet.result(id))),
      );
      expect(finals[0]!.equals(finals[1]!)).toBe(false);
      expect(finals[0]!.equals(finals[2]!)).toBe(false);
    } finally {
      await fleet.close();
    }
  });

  it('reports progress after every denoise step', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-progress');
    try {
      await fleet.startWorker();
      const { id, lane } = await fleet.enqueue(tinyRollout({ steps: 3 }));
      const done = await fleet.waitForCompletion(id);
      expect(done.progress).toEqual({ step: 3, steps: 3 });
      const progress = await progressEvents(fleet.redis, fleet.prefix, lane, id);
      // A fresh job starts at step 0 without a write; each denoise step is reported.
      expect(progress).toEqual([
        { step: 1, steps: 3 },
        { step: 2, steps: 3 },
        { step: 3, steps: 3 },
      ]);
    } finally {
      await fleet.close();
    }
  });

  it('starts a retried job back at step 0 before its first denoise step', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-progress-retry');
    try {
      const body = tinyRollout({ steps: 2 });
      const requirements = requirementsOf(body);
      await recordLane(fleet.redis, fleet.prefix, requirements, false);
      const { id, lane } = await addJob(fleet.redis, fleet.prefix, body, requirements);
      // Where an earlier attempt that died after its first step left the job.
      const queue = new Queue(lane, {
        connection: fleet.redis,
        prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(lane),
      });
      try {
        await (await queue.getJob(id))?.updateProgress({ step: 1, steps: 2 });
      } finally {
        await queue.close();
      }
      await fleet.startWorker();
      const done = await fleet.waitForCompletion(id);
      expect(done.progress).toEqual({ step: 2, steps: 2 });
      const progress = await progressEvents(fleet.redis, fleet.prefix, lane, id);
      expect(progress).toEqual([
        { step: 1, steps: 2 },
        { step: 0, steps: 2 },
        { step: 1, steps: 2 },
        { step: 2, steps: 2 },
      ]);
    } finally {
      await fleet.close();
    }
  });

  it('shows load changes in the heartbeat within its interval, with a few writes for many jobs', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-load-beats');
    const events = new Redis(server.url);
    try {
      // A long TTL: the periodic beat (every TTL/3) stays out of the count.
      const worker = await fleet.startWorker({ concurrency: 2, heartbeatTtlMs: 120_000 });
      const key = coordinatorKeys(fleet.prefix).heartbeat(worker.workerId);
      await fleet.redis.config('SET', 'notify-keyspace-events', 'K$');
      let writes = 0;
      events.on('message', () => (writes += 1));
      await events.subscribe(`__keyspace@0__:${key}`);
      const started = performance.now();
      const jobs = await Promise.all(
        Array.from({ length: 16 }, (_, i) => fleet.enqueue(tinyRollout({ seeds: [100 + i] }))),
      );
      for (const { id } of jobs) await fleet.waitForCompletion(id);
      const beat = async () =>
        WorkerHeartbeatSchema.parse(JSON.parse((await fleet.redis.get(key)) ?? '{}'));
      // The last change (nothing running) shows within one interval after it.
      await waitUntil(
        async () => ((await beat()).activeJobs === 0 ? true : undefined),
        'idle beat',
      );
      const elapsedMs = performance.now() - started;
      // 16 jobs are 32 load changes; beats are at most one per interval, plus the trailing one.
      expect(writes).toBeGreaterThanOrEqual(1);
      expect(writes).toBeLessThanOrEqual(Math.ceil(elapsedMs / LOAD_BEAT_INTERVAL_MS) + 2);
      expect(writes).toBeLessThan(32);
    } finally {
      await fleet.redis.config('SET', 'notify-keyspace-events', '');
      events.disconnect();
      await fleet.close();
    }
  });

  it('registers a valid manifest and a heartbeat with a TTL, and deletes the heartbeat on close', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-registration');
    try {
      const worker = await fleet.startWorker({ concurrency: 3, heartbeatTtlMs: 1_500 });
      const keys = coordinatorKeys(fleet.prefix);
      const manifest = WorkerManifestSchema.parse(
        JSON.parse((await fleet.redis.get(keys.worker(worker.workerId))) ?? '{}'),
      );
      expect(manifest).toMatchObject({
        workerId: worker.workerId,
        models: ['wan21-mini'],
        concurrency: 3,
        weights: { dit: 0, text_encoder: 0 },
      });
      const ops = manifest.kernels.filter((row) => row.available).map((row) => row.key['op']);
      expect(ops.sort()).toEqual(['cfg_combine', 'flow_match_step', 'flow_sde_step']);
      expect(await fleet.redis.sismember(keys.workers, worker.workerId)).toBe(1);
      const ttl = await fleet.redis.pttl(keys.heartbeat(worker.workerId));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1_500);
      // Refreshed well before it lapses: still there after more than one TTL.
      const firstBeat = WorkerHeartbeatSchema.parse(
        JSON.parse((await fleet.redis.get(keys.heartbeat(worker.workerId))) ?? '{}'),
      );
      await waitUntil(
        async () => {
          const beat = await fleet.redis.get(keys.heartbeat(worker.workerId));
          const at = beat === null ? undefined : WorkerHeartbeatSchema.parse(JSON.parse(beat)).at;
          return at !== undefined && Date.parse(at) - Date.parse(firstBeat.at) > 1_500
            ? true
            : undefined;
        },
        'a heartbeat one TTL later',
        4_000,
      );
      await worker.close();
      expect(await fleet.redis.exists(keys.heartbeat(worker.workerId))).toBe(0);
      expect(await fleet.redis.exists(keys.worker(worker.workerId))).toBe(1);
    } finally {
      await fleet.close();
    }
  });

  it('fails a job with untrusted bad data with a coded error, without retry, and keeps going', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-bad-data');
    try {
      const worker = await fleet.startWorker();
      const body = tinyRollout();
      const requirements = requirementsOf(body);
      const good = await fleet.enqueue(body);
      await fleet.waitForCompletion(good.id);
      const bad = await addJob(fleet.redis, fleet.prefix, body, requirements, {
        id: 'not the job id',
        lane: good.lane,
        request: { prompt: 42 },
      });
      // The coordinator cannot report on a payload it cannot parse either: read BullMQ's record.
      const queue = new Queue(bad.lane, {
        connection: fleet.redis,
        prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(bad.lane),
      });
      try {
        // State first, record second: a record read before the move lacks the reason.
        const failed = await waitUntil(async () => {
          const state = await queue.getJobState(bad.id);
          return state === 'failed' ? queue.getJob(bad.id) : undefined;
        }, 'the bad job to fail');
        const envelope = ErrorEnvelopeSchema.parse(JSON.parse(failed.failedReason));
        expect(envelope.code).toBe('PROTO_INVALID_JOB');
        expect(envelope.message).toMatch(/request\.prompt|id/);
        expect(failed.attemptsMade).toBe(1); // unrecoverable: the other 2 attempts were not used
      } finally {
        await queue.close();
      }
      const after = await fleet.enqueue(body);
      expect((await fleet.waitForCompletion(after.id)).summary?.worker).toBe(worker.workerId);
    } finally {
      await fleet.close();
    }
  });

  it('drains a running job on close, or hands it back when the drain bound passes', async () => {
    const fleet = await startTestFleet(server.url, 'jobs-drain');
    try {
      const slowBody = tinyRollout({ steps: 10 });
      const patient = await fleet.startWorker({ drainTimeoutMs: 30_000 });
      const first = await fleet.enqueue(slowBody);
      await waitUntil(
        async () => ((await fleet.status(first.id)).progress.step >= 1 ? true : undefined),
        'progress',
      );
      await patient.close();
      // Drained: the job finished before the worker let go.
      expect((await fleet.status(first.id)).status).toBe('completed');

      const hasty = await fleet.startWorker({ drainTimeoutMs: 0 });
      const second = await fleet.enqueue(slowBody);
      await waitUntil(
        async () => ((await fleet.status(second.id)).progress.step >= 1 ? true : undefined),
        'progress',
      );
      await hasty.close();
      const handedBack = await fleet.status(second.id);
      expect(handedBack.status).toBe('queued');
      expect(handedBack.attempts).toBe(0); // handing back does not use an attempt
      const rescuer = await fleet.startWorker();
      expect((await fleet.waitForCompletion(second.id, 60_000)).summary?.worker).toBe(
        rescuer.workerId,
      );
    } finally {
      await fleet.close();
    }
  });
});
