import { createHash } from 'node:crypto';
import { coordinatorKeys, EnqueuedRolloutSchema, ResultUploadSchema } from '@flowfleet/coordinator';
import {
  JOB_LOCK_HEADER,
  JobStatusSchema,
  RolloutJobSchema,
  SUMMARY_BYTES_HEADER,
  fleetKeys,
} from '@flowfleet/protocol';
import { wan21MiniCard } from '@flowfleet/models/wan21';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  onTestFinished,
} from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  fakeManifest,
  holdNextJob,
  registerFakeWorker,
  resultUpload,
  rolloutBody,
  startTestCoordinator,
  summaryFor,
  waitFor,
  type HeldTestJob,
  type TestCoordinator,
} from './fixture.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name, {
    limits: { maxSteps: 20, maxGroupSize: 4 },
  });
});
afterEach(async () => {
  await fixture?.close();
});

async function post(body: unknown, role: 'trainer' | 'viewer' = 'trainer') {
  return fixture.coordinator.app.inject({
    method: 'POST',
    url: '/v1/rollouts',
    headers: fixture.auth(role),
    payload: body as Record<string, unknown>,
  });
}

/**
 * Every BullMQ key of every lane (each lane's queue is under its own tag `{<prefix>:<lane>}`):
 * "nothing enqueued" means this set did not grow.
 */
async function queueKeys(): Promise<string[]> {
  return (await fixture.redis.keys(`{${fixture.prefix}:*}:bull:*`)).sort();
}

async function totalJobs(): Promise<number> {
  const lanes = await fixture.redis.hkeys(`{${fixture.prefix}}:lanes`);
  let total = 0;
  for (const lane of lanes) {
    const counts = await fixture.coordinator.services.queues.counts(lane);
    total += Object.values(counts).reduce((a, b) => a + b, 0);
  }
  return total;
}

describe('POST /v1/rollouts', () => {
  it.each([
    ['missing prompt', { model: 'wan21-mini', seeds: [1] }],
    ['unknown key', rolloutBody({ colour: 'red' })],
    ['steps over the limit', rolloutBody({ steps: 21 })],
    ['group over the limit', rolloutBody({ seeds: [1, 2, 3, 4, 5] })],
    ['duplicate seeds', rolloutBody({ seeds: [3, 3] })],
    ['latent over the limit', rolloutBody({ shape: { frames: 64, height: 128, width: 128 } })],
    ['bad device', rolloutBody({ constraints: { devices: ['tpu'] } })],
    ['not an object', [1, 2, 3]],
  ])('rejects %s with a coded 400 and enqueues nothing', async (_name, body) => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const before = await queueKeys();
    const response = await post(body);
    expect(response.statusCode).toBe(400);
    const error = response.json();
    expect(error.code).toBe('PROTO_INVALID_REQUEST');
    expect(error.details.issues.length).toBeGreaterThan(0);
    expect(await queueKeys()).toEqual(before);
    expect(await totalJobs()).toBe(0);
  });

  it('rejects malformed JSON and a body over maxBodyBytes with coded errors', async () => {
    const bad = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/json' },
      payload: '{"model":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('API_INVALID_JSON');
    const huge = await post(rolloutBody({ prompt: 'x'.repeat(2 * 1024 * 1024) }));
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('API_BODY_TOO_LARGE');
    const wrongType = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: { ...fixture.auth('trainer'), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json().code).toBe('API_UNSUPPORTED_MEDIA_TYPE');
    expect(await totalJobs()).toBe(0);
  });

  it('answers 409 API_NO_CAPACITY with no live worker and enqueues nothing', async () => {
    const before = await queueKeys();
    const response = await post(rolloutBody());
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 'API_NO_CAPACITY', details: { workers: [] } });
    expect(await queueKeys()).toEqual(before);
    expect(await fixture.redis.hlen(`{${fixture.prefix}}:lanes`)).toBe(0);
  });

  it("lists each live worker's reasons when none satisfies the job", async () => {
    await registerFakeWorker(
      fixture.redis,
      fixture.prefix,
      fakeManifest('w-cpu', { models: ['other-model'] }),
    );
    const response = await post(rolloutBody({ constraints: { devices: ['cuda'] } }));
    expect(response.statusCode).toBe(409);
    const [verdict] = response.json().details.workers;
    expect(verdict.workerId).toBe('w-cpu');
    expect(verdict.ok).toBe(false);
    expect(verdict.reasons.join('\n')).toMatch(/model 'wan21-mini'/);
    expect(verdict.reasons.join('\n')).toMatch(/device 'cpu' is not allowed/);
    expect(await totalJobs()).toBe(0);
  });

  it('holds the job with waitForCapacity: true (202, queued, lane recorded)', async () => {
    const response = await post(rolloutBody({ waitForCapacity: true }));
    expect(response.statusCode).toBe(202);
    const { id, lane, status, eligibleWorkers } = EnqueuedRolloutSchema.parse(response.json());
    expect(status).toBe('queued');
    expect(eligibleWorkers).toBe(0);
    expect(lane).toMatch(/^lane-[0-9a-f]{16}$/);
    const counts = await fixture.coordinator.services.queues.counts(lane);
    expect(counts.waiting).toBe(1);
    const job = await fixture.coordinator.services.queues.get(lane).getJob(id);
    expect(job?.id).toBe(id);
    expect(job?.opts.attempts).toBeGreaterThan(1);
    const data = RolloutJobSchema.parse(job?.data);
    // Left out, the sampling fields take the card's defaults; the payload states them.
    const { sampling, latent } = wan21MiniCard;
    expect(data).toMatchObject({
      id,
      lane,
      request: {
        steps: sampling.steps,
        sampler: sampling.sampler,
        shift: sampling.shift,
        noiseLevel: sampling.noiseLevel,
        guidanceScale: sampling.guidanceScale,
        shape: latent,
      },
    });
    expect(await fixture.redis.hexists(`{${fixture.prefix}}:lanes`, lane)).toBe(1);
  });

  it('enqueues onto the lane of the requirements when a live worker satisfies them', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const a = (await post(rolloutBody())).json();
    const b = (await post(rolloutBody({ seeds: [7], prompt: 'another prompt' }))).json();
    const ode = (await post(rolloutBody({ sampler: 'ode', guidanceScale: 1 }))).json();
    expect(a.lane).toBe(b.lane);
    expect(ode.lane).not.toBe(a.lane);
    expect(a.eligibleWorkers).toBe(1);
    expect(a.id).not.toBe(b.id);
    expect((await fixture.coordinator.services.queues.counts(a.lane)).waiting).toBe(2);
  });

  it('sees a worker that registers, and one whose heartbeat goes, at once (the manifests read is cached)', async () => {
    expect((await post(rolloutBody())).statusCode).toBe(409);
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-new'));
    // A "no" is decided on a fresh read: the new worker counts without waiting for the cache.
    const accepted = await post(rolloutBody());
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json().eligibleWorkers).toBe(1);
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-other'));
    // A "yes" may come from the cached manifests (read under a second ago): w-other not yet seen.
    expect((await post(rolloutBody())).json().eligibleWorkers).toBeGreaterThanOrEqual(1);
    // Liveness is read on every request: both heartbeats gone → refused at once.
    const keys = fleetKeys(fixture.prefix);
    await fixture.redis.del(keys.heartbeat('w-new'), keys.heartbeat('w-other'));
    const refused = await post(rolloutBody());
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('API_NO_CAPACITY');
  });

  it('refuses a weight version that was never synced', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const response = await post(rolloutBody({ weights: { dit: { min: 3 } } }));
    expect(response.statusCode).toBe(409);
    expect(response.json().code).toBe('API_WEIGHT_VERSION_UNAVAILABLE');
    expect(await totalJobs()).toBe(0);
  });
});

describe('Idempotency-Key (the IETF httpapi draft)', () => {
  const postWithKey = (body: unknown, key: string) =>
    fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: { ...fixture.auth('trainer'), 'idempotency-key': key },
      payload: body as Record<string, unknown>,
    });

  it('answers a repeat with the original answer, a reused key with another body 422, and adds one job', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-2'));
    const key = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const first = await postWithKey(rolloutBody(), key);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ eligibleWorkers: 2 });
    // Capacity changes; the repeat (bare or as the draft's quoted sf-string) is the first answer.
    await fixture.redis.del(`{${fixture.prefix}}:heartbeat:w-2`);
    for (const form of [key, `"${key}"`, key.toUpperCase()]) {
      const again = await postWithKey(rolloutBody(), form);
      expect(again.statusCode).toBe(202);
      expect(again.json()).toEqual(first.json());
    }
    const before = await queueKeys();
    const other = await postWithKey(rolloutBody({ seeds: [9] }), key);
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: 'API_IDEMPOTENCY_CONFLICT' });
    expect(await queueKeys()).toEqual(before);
    expect(await totalJobs()).toBe(1);
    const unbalanced = await postWithKey(rolloutBody(), `"${key}`);
    expect(unbalanced.statusCode).toBe(400);
  });
});

describe('a rollout through its lifecycle (a BullMQ worker stands in for the worker app)', () => {
  it('reports queued → active with progress → completed with summary and result bytes', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-e2e'));
    const enqueued = (await post(rolloutBody({ steps: 2 }))).json();
    const statusOf = async () => {
      const response = await fixture.coordinator.app.inject({
        method: 'GET',
        url: `/v1/rollouts/${enqueued.id}`,
        headers: fixture.auth('viewer'),
      });
      expect(response.statusCode).toBe(200);
      return JobStatusSchema.parse(response.json());
    };
    expect((await statusOf()).status).toBe('queued');
    // queueKeys() sees the lane's keys (so "it did not grow" elsewhere can fail).
    expect((await queueKeys()).some((key) => key.includes(enqueued.lane))).toBe(true);
    const noResult = await fixture.coordinator.app.inject({
      method: 'GET',
      url: `/v1/rollouts/${enqueued.id}/result`,
      headers: fixture.auth('viewer'),
    });
    expect(noResult.statusCode).toBe(404);
    expect(noResult.json().code).toBe('API_RESULT_NOT_FOUND');

    const tensors = Buffer.from('fake safetensors bytes');
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const connection = new Redis(server.url, { maxRetriesPerRequest: null });
    const worker = new Worker(
      enqueued.lane,
      async (job) => {
        const data = RolloutJobSchema.parse(job.data);
        // The edge stored the card's resolved request: every sampling field is set.
        const steps = data.request.steps!;
        await job.updateProgress({ step: 1, steps });
        await released;
        const summary = summaryFor(data.id, data.request.seeds, steps);
        const upload = resultUpload(summary, tensors, job.token);
        const put = await fetch(`${fixture.url}/v1/results/${data.id}`, {
          method: 'PUT',
          headers: { ...fixture.auth('worker'), ...upload.headers },
          body: upload.payload,
        });
        if (put.status !== 201) throw new Error(`upload: ${put.status} ${await put.text()}`);
        return summary;
      },
      {
        connection,
        prefix: coordinatorKeys(fixture.prefix).laneBullPrefix(enqueued.lane),
        name: 'w-e2e',
      },
    );
    try {
      await waitFor(async () => (await statusOf()).status === 'active', 'the job to start');
      const active = await statusOf();
      expect(active.progress).toEqual({ step: 1, steps: 2 });
      expect(active.worker).toBe('w-e2e');
      release();
      await waitFor(async () => (await statusOf()).status === 'completed', 'the job to finish');
      const done = await statusOf();
      expect(done.progress).toEqual({ step: 2, steps: 2 });
      expect(done.summary?.id).toBe(enqueued.id);
      // [T][G], step-major like the file's log_probs.
      expect(done.summary?.logProbs?.map((row) => row.length)).toEqual([2, 2]);
      const result = await fixture.coordinator.app.inject({
        method: 'GET',
        url: `/v1/rollouts/${enqueued.id}/result`,
        headers: fixture.auth('viewer'),
      });
      expect(result.statusCode).toBe(200);
      expect(result.headers['content-type']).toBe('application/octet-stream');
      expect(result.rawPayload.equals(tensors)).toBe(true);
    } finally {
      release();
      await worker.close();
      await connection.quit();
    }
  });

  it('writes a result once: same bytes → 200 unchanged, different bytes → 409; the first summary stands', async () => {
    const enqueued = (await post(rolloutBody({ waitForCapacity: true }))).json();
    const held = await holdNextJob(fixture, enqueued.lane);
    onTestFinished(() => held.close());
    const put = (worker: string, bytes: Buffer) =>
      fixture.coordinator.app.inject({
        method: 'PUT',
        url: `/v1/results/${enqueued.id}`,
        ...withWorkerAuth(resultUpload(summaryOfHeld(held, worker), bytes, held.lockToken)),
      });
    const first = await put('w-first', Buffer.from('tensor bytes v1'));
    expect(first.statusCode).toBe(201);
    expect(ResultUploadSchema.parse(first.json())).toEqual({
      id: enqueued.id,
      status: 'created',
      sha256: createHash('sha256').update('tensor bytes v1').digest('hex'),
      sizeBytes: 15,
      summary: 'created',
    });
    const again = await put('w-retry', Buffer.from('tensor bytes v1'));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ status: 'unchanged', summary: 'kept' });
    const different = await put('w-other', Buffer.from('tensor bytes v2'));
    expect(different.statusCode).toBe(409);
    expect(different.json().code).toBe('API_RESULT_CONFLICT');
    expect((await storedResult(enqueued.id))?.toString()).toBe('tensor bytes v1');
    expect(JSON.parse((await storedSummary(enqueued.id)) ?? '{}').worker).toBe('w-first');
  });

  it('DELETE cancels a queued job (it never runs, its id then answers 404); a running one finishes (409 API_JOB_NOT_CANCELLABLE)', async () => {
    const cancel = (id: string, role: 'trainer' | 'viewer' = 'trainer') =>
      fixture.coordinator.app.inject({
        method: 'DELETE',
        url: `/v1/rollouts/${id}`,
        headers: fixture.auth(role),
      });
    const queued = (await post(rolloutBody({ waitForCapacity: true }))).json();
    expect((await cancel(queued.id, 'viewer')).statusCode).toBe(403);
    const cancelled = await cancel(queued.id);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toEqual({ id: queued.id, lane: queued.lane, status: 'cancelled' });
    const { queues } = fixture.coordinator.services;
    expect(await queues.get(queued.lane).getJobState(queued.id)).toBe('unknown');
    expect((await queues.counts(queued.lane)).waiting).toBe(0);
    const gone = await fixture.coordinator.app.inject({
      method: 'GET',
      url: `/v1/rollouts/${queued.id}`,
      headers: fixture.auth('viewer'),
    });
    expect(gone.statusCode).toBe(404);
    const again = await cancel(queued.id);
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('API_JOB_NOT_FOUND');

    const running = (await post(rolloutBody({ waitForCapacity: true }))).json();
    const held = await holdNextJob(fixture, running.lane);
    onTestFinished(() => held.close());
    const refused = await cancel(running.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'API_JOB_NOT_CANCELLABLE',
      details: { id: running.id, status: 'active' },
    });
    // The running attempt is not abandoned: it still stores its result.
    const stored = await fixture.coordinator.app.inject({
      method: 'PUT',
      url: `/v1/results/${running.id}`,
      ...withWorkerAuth(resultUpload(summaryOfHeld(held), Buffer.from('t'), held.lockToken)),
    });
    expect(stored.statusCode).toBe(201);
    expect(await queues.get(running.lane).getJobState(running.id)).toBe('active');
  });

  it('stores a result only from the attempt that holds the job (409 API_RESULT_NOT_HOLDER), nothing written', async () => {
    const enqueued = (await post(rolloutBody({ waitForCapacity: true }))).json();
    const tensors = Buffer.from('tensor bytes');
    const put = (lock: string, summary: unknown) =>
      fixture.coordinator.app.inject({
        method: 'PUT',
        url: `/v1/results/${enqueued.id}`,
        ...withWorkerAuth(resultUpload(summary, tensors, lock)),
      });
    const { request } = RolloutJobSchema.parse(
      (await fixture.coordinator.services.queues.get(enqueued.lane).getJob(enqueued.id))?.data,
    );
    // The edge stored the card's resolved request: every sampling field is set.
    const honest = summaryFor(enqueued.id, request.seeds, request.steps!);
    // Queued: nobody holds it, whatever token is sent.
    const queued = await put('w-x:00000000-0000-0000-0000-000000000000', honest);
    expect(queued.statusCode).toBe(409);
    expect(queued.json().code).toBe('API_RESULT_NOT_HOLDER');
    const held = await holdNextJob(fixture, enqueued.lane);
    onTestFinished(() => held.close());
    const wrong = await put(`${held.lockToken}-not`, honest);
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().code).toBe('API_RESULT_NOT_HOLDER');
    expect(await storedResult(enqueued.id)).toBeUndefined();
    expect(await storedSummary(enqueued.id)).toBeUndefined();
    const holder = await put(held.lockToken, honest);
    expect(holder.statusCode).toBe(201);
  });

  it('refuses a result that does not describe the job (422 API_RESULT_MISMATCH), nothing written', async () => {
    const enqueued = (
      await post(rolloutBody({ waitForCapacity: true, seeds: [11, 12, 13] }))
    ).json();
    const held = await holdNextJob(fixture, enqueued.lane);
    onTestFinished(() => held.close());
    const honest = summaryOfHeld(held);
    const forged = [
      [summaryFor(held.id, [1, 2], honest.steps), ['seeds']],
      [summaryFor(held.id, [11, 12, 13], honest.steps + 1), ['steps']],
      [{ ...honest, prompt: 'another prompt' }, ['prompt']],
      [{ ...honest, model: 'wan21-t2v-1.3b' }, ['model']],
      [
        { ...honest, guidanceScale: 1, noiseLevel: 0.5, shift: 5 },
        ['guidanceScale', 'noiseLevel', 'shift'],
      ],
      [{ ...honest, seeds: [12, 11, 13] }, ['seeds']],
    ] as const;
    for (const [summary, fields] of forged) {
      const response = await fixture.coordinator.app.inject({
        method: 'PUT',
        url: `/v1/results/${held.id}`,
        ...withWorkerAuth(resultUpload(summary, Buffer.from('x'), held.lockToken)),
      });
      expect(response.statusCode, fields.join()).toBe(422);
      const body = response.json();
      expect(body.code).toBe('API_RESULT_MISMATCH');
      expect(body.details.mismatches.map((m: { field: string }) => m.field)).toEqual(fields);
    }
    expect(await storedResult(held.id)).toBeUndefined();
    expect(await storedSummary(held.id)).toBeUndefined();
  });

  it('refuses a malformed upload, a summary that fails its schema or names another job, and results for unknown jobs, storing nothing', async () => {
    const enqueued = (await post(rolloutBody({ waitForCapacity: true }))).json();
    const held = await holdNextJob(fixture, enqueued.lane);
    onTestFinished(() => held.close());
    const lock = held.lockToken;
    const put = (id: string, upload: { headers: Record<string, string>; payload: Buffer }) =>
      fixture.coordinator.app.inject({
        method: 'PUT',
        url: `/v1/results/${id}`,
        ...withWorkerAuth(upload),
      });
    const tensors = Buffer.from('x');
    const notJson = await put(enqueued.id, resultUpload('{nope', tensors, lock));
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().code).toBe('API_INVALID_BODY');
    const other = summaryFor('some-other-job', [1, 2], 2);
    const wrongId = await put(enqueued.id, resultUpload(other, tensors, lock));
    expect(wrongId.statusCode).toBe(400);
    expect(wrongId.json().code).toBe('API_INVALID_BODY');
    // RolloutFile v1's summary schema: timesteps has T entries (as the file), not T + 1.
    const stale = { ...summaryOfHeld(held), timesteps: [] };
    const wrongLayout = await put(enqueued.id, resultUpload(stale, tensors, lock));
    expect(wrongLayout.statusCode).toBe(400);
    expect(wrongLayout.json().code).toBe('API_INVALID_BODY');
    const good = resultUpload(summaryOfHeld(held), tensors, lock);
    for (const header of [undefined, 'many', '1', String(good.payload.byteLength + 1)]) {
      const headers: Record<string, string> = {
        'content-type': 'application/octet-stream',
        [JOB_LOCK_HEADER]: lock,
      };
      if (header !== undefined) headers[SUMMARY_BYTES_HEADER] = header;
      const bad = await put(enqueued.id, { headers, payload: good.payload });
      expect(bad.statusCode, `summary bytes header ${header}`).toBe(400);
      expect(bad.json().code).toBe('API_INVALID_BODY');
    }
    expect(await storedResult(enqueued.id)).toBeUndefined();
    expect(await storedSummary(enqueued.id)).toBeUndefined();
    const unknown = await put(
      'no-such-job',
      resultUpload(summaryFor('no-such-job', [1], 2), tensors, lock),
    );
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('API_JOB_NOT_FOUND');
    const badId = await put('no/such', good);
    expect(badId.statusCode).toBe(404);
  });

  it('answers 404 API_JOB_NOT_FOUND for an unknown id and 400 for a malformed one', async () => {
    const unknown = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/rollouts/does-not-exist',
      headers: fixture.auth('viewer'),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('API_JOB_NOT_FOUND');
    const malformed = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/rollouts/bad%3Aid',
      headers: fixture.auth('viewer'),
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe('API_INVALID_PARAMS');
  });
});

/** A summary of the job `held` holds, describing exactly its request. */
function summaryOfHeld(held: HeldTestJob, worker?: string) {
  const { request } = RolloutJobSchema.parse(held.data);
  return summaryFor(held.id, request.seeds, request.steps!, worker);
}

/** An upload's inject options with the worker token added. */
function withWorkerAuth(upload: { headers: Record<string, string>; payload: Buffer }) {
  return { headers: { ...fixture.auth('worker'), ...upload.headers }, payload: upload.payload };
}

async function storedResult(id: string): Promise<Buffer | undefined> {
  const opened = await fixture.coordinator.services.blobs.openResult(id, 'result.safetensors');
  return opened === undefined ? undefined : readAll(opened.stream);
}

async function storedSummary(id: string): Promise<string | undefined> {
  const opened = await fixture.coordinator.services.blobs.openResult(id, 'summary.json');
  return opened === undefined ? undefined : (await readAll(opened.stream)).toString('utf8');
}

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
