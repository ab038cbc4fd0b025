// A job that runs again after an earlier attempt stored its result (that attempt's completion was
// lost) on other weights: a job with no pinned version, retried after a sync. The earlier result
// stands and the job completes with the earlier attempt's summary, instead of failing while a
// valid result is stored.
import { coordinatorKeys } from '@flowfleet/coordinator';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, waitUntil, type TestFleet } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** The version of dit `workerId` holds, from its manifest. */
async function heldDit(fleet: TestFleet, workerId: string): Promise<number | undefined> {
  const response = await fleet.api('/v1/fleet');
  const body = (await response.json()) as {
    workers: { workerId: string; weights: Record<string, number> }[];
  };
  return body.workers.find((w) => w.workerId === workerId)?.weights['dit'];
}

/** Moves completed job `id` of `lane` back to waiting, as if its completion had never landed. */
async function runAgain(fleet: TestFleet, lane: string, id: string): Promise<void> {
  const queue = new Queue(lane, {
    connection: fleet.redis,
    prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(lane),
  });
  try {
    const job = await queue.getJob(id);
    if (job === undefined) throw new Error(`no job ${id}`);
    await job.retry('completed');
  } finally {
    await queue.close();
  }
}

describe('a retried job whose earlier attempt stored a different result', () => {
  it('completes with the stored result and its summary, not WORKER_RESULT_CONFLICT', async () => {
    const fleet = await startTestFleet(server.url, 'result-conflict');
    try {
      const worker = await fleet.startWorker();
      // No weights pin: any dit version serves it.
      const { id, lane } = await fleet.enqueue(tinyRollout({ seeds: [5, 6] }));
      const first = await fleet.waitForCompletion(id);
      const firstResult = await fleet.result(id);
      const firstDit = first.summary?.weightsVersions['dit'];
      expect(firstDit).toBeDefined();

      const next = (firstDit ?? 0) + 1;
      await fleet.syncWeights(
        'dit',
        next,
        encodeWeights(initWeights(wan21MiniCard.config, 9, 'dit')),
      );
      await waitUntil(
        async () => ((await heldDit(fleet, worker.workerId)) === next ? true : undefined),
        `the worker on dit v${next}`,
        20_000,
      );

      await runAgain(fleet, lane, id);
      const second = await waitUntil(
        async () => {
          const status = await fleet.status(id);
          if (status.status === 'failed')
            throw new Error(`job ${id} failed: ${JSON.stringify(status.error)}`);
          return status.status === 'completed' && status.attempts >= 2 ? status : undefined;
        },
        `job ${id} to complete again`,
        30_000,
      );
      // The earlier result stands, and so does what the trainer is told about it.
      expect(Buffer.from(await fleet.result(id)).equals(Buffer.from(firstResult))).toBe(true);
      expect(second.summary?.weightsVersions['dit']).toBe(firstDit);
      expect(second.summary).toEqual(first.summary);

      // The second attempt really did run on the new weights (its bytes differ): the same request
      // enqueued afresh now runs on dit `next` and gives another result.
      const fresh = await fleet.enqueue(tinyRollout({ seeds: [5, 6] }));
      const freshDone = await fleet.waitForCompletion(fresh.id);
      expect(freshDone.summary?.weightsVersions['dit']).toBe(next);
    } finally {
      await fleet.close();
    }
  }, 90_000);
});
