import type { FlowfleetClient } from '@flowfleet/client';
import { writeSafetensors } from '@flowfleet/formats';
import { RolloutJobSchema, fleetKeys, type JobStatus, type SyncAck } from '@flowfleet/protocol';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  fakeManifest,
  registerFakeWorker,
  startTestCoordinator,
  summaryFor,
  waitFor,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: FlowfleetClient;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name);
  trainer = clientFor(fixture, 'trainer');
});
afterEach(async () => {
  // The client first: its pool would otherwise keep connections the coordinator's drain waits on.
  await trainer?.close();
  await fixture?.close();
});

const REQUEST = { model: 'wan21-mini', prompt: 'a red fox in snow', seeds: [1, 2] };

/** A BullMQ worker on `lane` standing in for the worker app. */
function standInWorker(lane: string, process: ConstructorParameters<typeof Worker>[1]) {
  const connection = new Redis(server.url, { maxRetriesPerRequest: null });
  const worker = new Worker(lane, process, {
    connection,
    prefix: fleetKeys(fixture.prefix).laneBullPrefix(lane),
    name: 'w-standin',
  });
  return {
    async close() {
      await worker.close();
      await connection.quit();
    },
  };
}

describe('status long-poll (GET /v1/rollouts/:id?waitMs=…)', () => {
  it('waits while the job stays as seen, and answers at once when it changes', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-standin'));
    const enqueued = await trainer.enqueueRollouts({ ...REQUEST, steps: 3 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reportStep2!: () => void;
    const step2 = new Promise<void>((resolve) => (reportStep2 = resolve));
    const worker = standInWorker(enqueued.lane, async (job) => {
      await job.updateProgress({ step: 1, steps: 3 });
      await step2;
      await job.updateProgress({ step: 2, steps: 3 });
      await released;
      throw new UnrecoverableError('stand-in stops here');
    });
    try {
      let seen = await trainer.status(enqueued.id);
      await waitFor(async () => {
        seen = await trainer.status(enqueued.id);
        return seen.progress.step === 1;
      }, 'step 1');
      // Unchanged: the coordinator holds the request for waitMs, then answers as it stands.
      let started = Date.now();
      const unchanged = await trainer.status(enqueued.id, undefined, { waitMs: 600, seen });
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
      expect(unchanged.progress.step).toBe(1);
      // A change wakes it long before waitMs: the job's progress event, not a timer.
      started = Date.now();
      const pending = trainer.status(enqueued.id, undefined, { waitMs: 20_000, seen });
      reportStep2();
      const changed = await pending;
      expect(changed.progress.step).toBe(2);
      expect(Date.now() - started).toBeLessThan(5_000);
      // A failure (a terminal state) answers at once too.
      started = Date.now();
      const ending = trainer.status(enqueued.id, undefined, { waitMs: 20_000, seen: changed });
      release();
      expect((await ending).status).toBe('failed');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      release();
      reportStep2();
      await worker.close();
    }
  });

  it('refuses a waitMs above 30 s with a coded 400', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-standin'));
    const enqueued = await trainer.enqueueRollouts(REQUEST);
    const response = await fixture.coordinator.app.inject({
      method: 'GET',
      url: `/v1/rollouts/${enqueued.id}?waitMs=30001&status=queued`,
      headers: fixture.auth('viewer'),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('API_INVALID_PARAMS');
  });
});

describe('waitFor', () => {
  it('reports each step of a running job through onProgress and resolves completed', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-standin'));
    const steps = 3;
    const enqueued = await trainer.enqueueRollouts({ ...REQUEST, steps });
    const reports: JobStatus[] = [];
    // The stand-in holds each step until the client has seen it: no step can be skipped, and
    // nothing waits on a fixed sleep.
    const seenSteps = new Set<number>();
    const worker = standInWorker(enqueued.lane, async (job) => {
      const data = RolloutJobSchema.parse(job.data);
      for (let step = 1; step <= steps; step++) {
        await job.updateProgress({ step, steps });
        await waitFor(async () => seenSteps.has(step), `the client to see step ${step}`);
      }
      const summary = summaryFor(data.id, data.request.seeds, steps, 'w-standin');
      const workerClient = clientFor(fixture, 'worker');
      await workerClient.uploadResults(data.id, job.token ?? '', {
        summary: new TextEncoder().encode(JSON.stringify(summary)),
        result: new TextEncoder().encode('stand-in tensors'),
      });
      return summary;
    });
    try {
      const done = await trainer.waitFor(enqueued.id, {
        pollMs: 10,
        maxPollMs: 50,
        timeoutMs: 20_000,
        onProgress: (status) => {
          reports.push(status);
          if (status.status === 'active') seenSteps.add(status.progress.step);
        },
      });
      expect(done.status).toBe('completed');
      expect(done.summary?.id).toBe(enqueued.id);
      expect(done.worker).toBe('w-standin');
      // The job may be seen active before its first progress report (step 0).
      const activeSteps = reports
        .filter((r) => r.status === 'active' && r.progress.step > 0)
        .map((r) => r.progress.step);
      expect(activeSteps).toEqual([1, 2, 3]);
      expect(reports.at(-1)).toMatchObject({ status: 'completed', progress: { step: 3, steps } });
      const allSteps = reports.map((r) => r.progress.step);
      expect(allSteps).toEqual([...allSteps].sort((a, b) => a - b));
    } finally {
      await worker.close();
    }
  });

  it("throws CLIENT_JOB_FAILED with the worker's error envelope when the job fails", async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-standin'));
    const enqueued = await trainer.enqueueRollouts(REQUEST);
    const envelope = {
      code: 'WORKER_JOB_UNSERVABLE',
      message: 'requirements not satisfied here',
      details: { lane: enqueued.lane },
    };
    // The worker app fails a job by throwing the envelope JSON (unrecoverable: no retry).
    const worker = standInWorker(enqueued.lane, async () => {
      throw new UnrecoverableError(JSON.stringify(envelope));
    });
    try {
      const error = await rejection(
        trainer.waitFor(enqueued.id, { pollMs: 10, timeoutMs: 20_000 }),
      );
      expect(error.code).toBe('CLIENT_JOB_FAILED');
      expect(error.details).toMatchObject({ id: enqueued.id, error: envelope, attempts: 1 });
      expect((error.cause as { code?: string }).code).toBe('WORKER_JOB_UNSERVABLE');
    } finally {
      await worker.close();
    }
  });

  it('stops waiting with CLIENT_ABORTED when the signal fires, leaving the job queued', async () => {
    const held = await trainer.enqueueRollouts({ ...REQUEST, waitForCapacity: true });
    const controller = new AbortController();
    let polls = 0;
    const waiting = rejection(
      trainer.waitFor(held.id, {
        signal: controller.signal,
        pollMs: 10,
        onProgress: () => {
          polls += 1;
        },
      }),
    );
    await waitFor(async () => polls > 0, 'the first status');
    controller.abort(new Error('trainer shutting down'));
    const error = await waiting;
    expect(error.code).toBe('CLIENT_ABORTED');
    expect((error.cause as Error).message).toBe('trainer shutting down');
    expect((await trainer.status(held.id)).status).toBe('queued');
  });

  it('times out with CLIENT_TIMEOUT and the last status', async () => {
    const held = await trainer.enqueueRollouts({ ...REQUEST, waitForCapacity: true });
    const error = await rejection(trainer.waitFor(held.id, { pollMs: 10, timeoutMs: 150 }));
    expect(error.code).toBe('CLIENT_TIMEOUT');
    expect(error.details).toMatchObject({
      what: 'waitFor',
      last: { id: held.id, status: 'queued' },
    });
  });
});

describe('waitForSync', () => {
  /** Writes an ack the way a worker does: HSET acks(component, version) workerId SyncAck JSON. */
  async function ack(workerId: string, version: number, status: SyncAck['status']) {
    const record: SyncAck = {
      workerId,
      component: 'dit',
      version,
      status,
      ...(status === 'ok' ? {} : { reason: 'sha256 mismatch' }),
      at: new Date().toISOString(),
    };
    await fixture.redis.hset(
      fleetKeys(fixture.prefix).acks('dit', version),
      workerId,
      JSON.stringify(record),
    );
  }

  async function syncVersion(version: number): Promise<void> {
    const blob = await trainer.uploadBlob(
      writeSafetensors({ w: { dtype: 'F32', shape: [1], data: Float32Array.of(version) } }),
    );
    await trainer.syncWeights('dit', version, blob.sha256);
  }

  beforeEach(async () => {
    // Workers of the model hold its components (version 0 until they load a sync).
    const weights = { dit: 0, text_encoder: 0 };
    for (const id of ['w-a', 'w-b', 'w-c']) {
      await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest(id, { weights }));
    }
  });

  it('resolves once minWorkers live workers acked ok, not before', async () => {
    await syncVersion(1);
    const updates: string[][] = [];
    let resolved = false;
    const waiting = trainer
      .waitForSync(
        'dit',
        1,
        { minWorkers: 2 },
        {
          pollMs: 10,
          timeoutMs: 20_000,
          onUpdate: (progress) => updates.push([...progress.okWorkers]),
        },
      )
      .finally(() => {
        resolved = true;
      });
    await ack('w-a', 1, 'ok');
    await ack('w-c', 1, 'refused');
    await waitFor(async () => updates.some((ok) => ok.length === 1), 'the first ok ack');
    expect(resolved).toBe(false);
    await ack('w-b', 1, 'ok');
    const progress = await waiting;
    expect(progress.okWorkers).toEqual(['w-a', 'w-b']);
    expect(progress.status).toBe('loaded');
    expect(progress.reasons).toEqual({ 'w-c': 'sha256 mismatch' });
  });

  it('times out when fewer than minWorkers acked ok', async () => {
    await syncVersion(1);
    await ack('w-a', 1, 'ok');
    const error = await rejection(
      trainer.waitForSync('dit', 1, { minWorkers: 2 }, { pollMs: 10, timeoutMs: 200 }),
    );
    expect(error.code).toBe('CLIENT_TIMEOUT');
    expect(error.details).toMatchObject({
      what: 'waitForSync',
      last: { okWorkers: ['w-a'], liveWorkers: ['w-a', 'w-b', 'w-c'] },
    });
  });

  it('with all: true waits for every live worker and ignores dead ones', async () => {
    await syncVersion(1);
    await fixture.redis.del(fleetKeys(fixture.prefix).heartbeat('w-c'));
    await ack('w-a', 1, 'ok');
    const short = await rejection(
      trainer.waitForSync('dit', 1, { all: true }, { pollMs: 10, timeoutMs: 150 }),
    );
    expect(short.code).toBe('CLIENT_TIMEOUT');
    await ack('w-b', 1, 'ok');
    const progress = await trainer.waitForSync('dit', 1, { all: true }, { pollMs: 10 });
    expect(progress.liveWorkers).toEqual(['w-a', 'w-b']);
    expect(progress.okWorkers).toEqual(['w-a', 'w-b']);
  });

  it('throws CLIENT_SYNC_FAILED when no live worker could load the version', async () => {
    await syncVersion(1);
    await ack('w-a', 1, 'refused');
    await ack('w-b', 1, 'failed');
    await ack('w-c', 1, 'refused');
    const error = await rejection(trainer.waitForSync('dit', 1, { minWorkers: 1 }));
    expect(error.code).toBe('CLIENT_SYNC_FAILED');
    expect(error.details).toMatchObject({
      status: 'failed',
      acks: { 'w-a': 'refused', 'w-b': 'failed', 'w-c': 'refused' },
    });
  });

  it('throws CLIENT_UNKNOWN_VERSION for a version never synced', async () => {
    await syncVersion(1);
    const error = await rejection(trainer.waitForSync('dit', 2, { minWorkers: 1 }));
    expect(error.code).toBe('CLIENT_UNKNOWN_VERSION');
    expect(error.details).toMatchObject({
      component: 'dit',
      version: 2,
      current: null,
      latest: { version: 1, status: 'pending' },
    });
  });
});
