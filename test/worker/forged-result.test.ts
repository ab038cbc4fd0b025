// Issue 22 item 2: a worker token alone must not put a result under a job, and a worker must never
// adopt a stored result that does not answer its job. The forgery the probes made: another
// request's real result, its summary's id changed, PUT under a queued job.
import { JOB_LOCK_HEADER, SUMMARY_BYTES_HEADER, type JobStatus } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, TOKENS, waitUntil, type TestFleet } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** Another request's real result and summary (seeds 1, 2; 2 steps), run by a worker that then stops. */
async function anotherRequestsResult(
  fleet: TestFleet,
): Promise<{ summary: NonNullable<JobStatus['summary']>; result: Uint8Array }> {
  const worker = await fleet.startWorker();
  const other = await fleet.enqueue(tinyRollout({ seeds: [1, 2], steps: 2 }));
  const done = await fleet.waitForCompletion(other.id, 60_000);
  const result = await fleet.result(other.id);
  await worker.close();
  if (done.summary === undefined) throw new Error('a completed job without a summary');
  return { summary: done.summary, result };
}

/** What the trainer asked for: G = 4, 3 steps; it must get exactly that back. */
const ASKED = tinyRollout({ seeds: [11, 12, 13, 14], steps: 3, waitForCapacity: true });

async function failedOrCompleted(fleet: TestFleet, id: string): Promise<JobStatus> {
  return waitUntil(
    async () => {
      const status = await fleet.status(id);
      return status.status === 'completed' || status.status === 'failed' ? status : undefined;
    },
    `job ${id} to finish`,
    60_000,
  );
}

describe('a forged result', () => {
  it('is refused from a caller that does not hold the job; the job then completes with its own result', async () => {
    const fleet = await startTestFleet(server.url, 'forged-put');
    try {
      const copied = await anotherRequestsResult(fleet);
      const target = await fleet.enqueue(ASKED);
      const summary = Buffer.from(JSON.stringify({ ...copied.summary, id: target.id }));
      for (const lock of [undefined, 'made-up-lock-token']) {
        const put = await fetch(`${fleet.url}/v1/results/${target.id}`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${TOKENS.worker}`,
            'content-type': 'application/octet-stream',
            [SUMMARY_BYTES_HEADER]: String(summary.byteLength),
            ...(lock === undefined ? {} : { [JOB_LOCK_HEADER]: lock }),
          },
          body: Buffer.concat([summary, copied.result]),
        });
        const body = (await put.json()) as { code?: string };
        expect(put.status, `lock ${lock}`).toBe(lock === undefined ? 400 : 409);
        expect(body.code).toBe(lock === undefined ? 'API_INVALID_BODY' : 'API_RESULT_NOT_HOLDER');
      }
      const nothing = await fleet.api(`/v1/rollouts/${target.id}/result`);
      expect(nothing.status).toBe(404);

      await fleet.startWorker();
      const done = await failedOrCompleted(fleet, target.id);
      expect(done.status).toBe('completed');
      expect(done.summary?.seeds).toEqual([11, 12, 13, 14]);
      expect(done.summary?.steps).toBe(3);
      expect(done.summary?.logProbs).toHaveLength(3);
    } finally {
      await fleet.close();
    }
  }, 120_000);

  it('stored around the API is never adopted: the job fails WORKER_RESULT_CONFLICT', async () => {
    const fleet = await startTestFleet(server.url, 'forged-store');
    try {
      const copied = await anotherRequestsResult(fleet);
      const target = await fleet.enqueue(ASKED);
      // Written straight into the blob store (a store shared with something else, an older
      // coordinator): only the worker's own check stands between it and the trainer.
      const { blobs } = fleet.coordinator().services;
      const summary = Buffer.from(JSON.stringify({ ...copied.summary, id: target.id }));
      await blobs.putResult(target.id, 'result.safetensors', [copied.result], 1 << 26);
      await blobs.putResult(target.id, 'summary.json', [summary], 1 << 20);

      await fleet.startWorker();
      const done = await failedOrCompleted(fleet, target.id);
      expect(done.summary?.seeds).not.toEqual([1, 2]);
      expect(done.status).toBe('failed');
      expect(done.error?.code).toBe('WORKER_RESULT_CONFLICT');
    } finally {
      await fleet.close();
    }
  }, 120_000);
});
