// Shared set-up of the worker and fleet tests: a real redis-server, a coordinator run in-process
// (tests may import the app; the worker never does), in-process workers on the cpu backend with
// short lock settings, and small helpers to enqueue, wait and read results. Every fleet uses its
// own key prefix and blob dir and removes them on close.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCoordinator,
  type Coordinator,
  type CoordinatorOptions,
} from '@flowfleet/coordinator';
import { JobStatusSchema, type JobStatus } from '@flowfleet/protocol';
import { createWorker, type FlowfleetWorker, type WorkerOptions } from '@flowfleet/worker';
import { createRedis, type RedisClient } from '@flowfleet/redis';
import { pino } from 'pino';
import { uniquePrefix } from '../harness/redis-server.js';

export const TOKENS = {
  trainer: 'trainer-token-worker-tests-0123456789',
  viewer: 'viewer-token-worker-tests-0123456789',
  worker: 'worker-token-worker-tests-0123456789',
} as const;

/** Lock settings short enough that a dead worker's job moves on within a few seconds. */
export const FAST_LOCKS = Object.freeze({
  lockDurationMs: 2_000,
  stalledIntervalMs: 1_000,
  maxStalledCount: 3,
});

/** The smallest useful rollout: G = 2, 2 denoise steps, one 8×8 latent frame, CFG on. */
export function tinyRollout(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'wan21-mini',
    prompt: 'a red fox in the snow',
    seeds: [11, 12],
    steps: 2,
    shape: { frames: 1, height: 8, width: 8 },
    ...overrides,
  };
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function waitUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A coordinator plus workers on one prefix. */
export interface TestFleet {
  readonly prefix: string;
  readonly blobDir: string;
  /** The coordinator's base URL (stable across `restartCoordinator`). */
  readonly url: string;
  readonly redisUrl: string;
  /** The test's own Redis client (a Cluster client on a cluster fleet). */
  readonly redis: RedisClient;
  readonly coordinator: () => Coordinator;
  /** Starts an in-process worker on this fleet (cpu backend, fast locks, unless overridden). */
  startWorker(overrides?: Partial<WorkerOptions>): Promise<FlowfleetWorker>;
  /** POST /v1/rollouts as the trainer; throws on a non-202 answer. */
  enqueue(body: Record<string, unknown>): Promise<{ id: string; lane: string }>;
  /** GET /v1/rollouts/:id. */
  status(id: string): Promise<JobStatus>;
  /** Polls until the job is completed (or failed: then throws with its error). */
  waitForCompletion(id: string, timeoutMs?: number): Promise<JobStatus>;
  /** GET /v1/rollouts/:id/result bytes. */
  result(id: string): Promise<Uint8Array>;
  /** PUT /v1/blobs then POST /v1/weights/:component/sync; returns the sha256. */
  syncWeights(component: string, version: number, bytes: Uint8Array): Promise<string>;
  /** Fetches with the trainer token. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** Closes the coordinator (the workers keep running). */
  stopCoordinator(): Promise<void>;
  /** Starts a new coordinator on the same port, prefix and blob dir. */
  startCoordinator(): Promise<void>;
  /** Closes every worker and the coordinator, deletes the prefix's keys and the blob dir. */
  close(): Promise<void>;
}

/**
 * Starts a coordinator on `redisUrl` under a fresh prefix (with `coordinator` options, e.g. cards;
 * `redisMode: 'cluster'` makes the coordinator, every worker and the test's client cluster clients).
 */
export async function startTestFleet(
  redisUrl: string,
  name: string,
  coordinatorOverrides: Partial<
    Pick<
      CoordinatorOptions,
      | 'cards'
      | 'limits'
      | 'scalingClasses'
      | 'redisMode'
      | 'redisReplication'
      | 'prefix'
      | 'blobDir'
      | 'retention'
      | 'egressBytesPerSecond'
    >
  > = {},
): Promise<TestFleet> {
  const redisMode = coordinatorOverrides.redisMode ?? 'standalone';
  const prefix = coordinatorOverrides.prefix ?? uniquePrefix(name);
  const blobDir =
    coordinatorOverrides.blobDir ?? (await mkdtemp(join(tmpdir(), 'flowfleet-fleet-')));
  const build = (): Coordinator =>
    createCoordinator({
      redisUrl,
      prefix,
      tokens: TOKENS,
      blobDir,
      heartbeatTtlMs: 5_000,
      ...coordinatorOverrides,
    });
  let coordinator = build();
  const url = await coordinator.start(0);
  const port = Number(new URL(url).port);
  const redis = createRedis(redisUrl, { mode: redisMode, maxRetriesPerRequest: null });
  // Reconnects (a restart, a failover) are expected; commands wait for them.
  redis.on('error', () => undefined);
  const workers: FlowfleetWorker[] = [];
  let serial = 0;
  const api = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKENS.trainer}`, ...(init.headers ?? {}) },
    });
  const status = async (id: string): Promise<JobStatus> => {
    const response = await api(`/v1/rollouts/${id}`);
    if (response.status !== 200) throw new Error(`status ${id}: ${await response.text()}`);
    return JobStatusSchema.parse(await response.json());
  };
  const fleet: TestFleet = {
    prefix,
    blobDir,
    url,
    redisUrl,
    redis,
    coordinator: () => coordinator,
    async startWorker(overrides = {}) {
      serial += 1;
      const worker = createWorker({
        redisUrl,
        redisMode,
        coordinatorUrl: url,
        workerToken: TOKENS.worker,
        workerId: `w${serial}-${prefix.slice(-6)}`,
        prefix,
        backend: 'cpu',
        locks: FAST_LOCKS,
        pollIntervalMs: 500,
        drainTimeoutMs: 5_000,
        uploadRetryMs: 15_000,
        // WORKER_TEST_LOG=debug shows the workers' logs while debugging a test.
        ...(process.env['WORKER_TEST_LOG'] === undefined
          ? {}
          : { logger: pino({ level: process.env['WORKER_TEST_LOG'] }) }),
        ...overrides,
      });
      workers.push(worker);
      await worker.start();
      return worker;
    },
    async enqueue(body) {
      const response = await api('/v1/rollouts', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 202) throw new Error(`enqueue: ${response.status} ${text}`);
      return JSON.parse(text) as { id: string; lane: string };
    },
    status,
    async waitForCompletion(id, timeoutMs = 20_000) {
      return waitUntil(
        async () => {
          const job = await status(id);
          if (job.status === 'failed')
            throw new Error(`job ${id} failed: ${JSON.stringify(job.error)}`);
          return job.status === 'completed' ? job : undefined;
        },
        `job ${id} to complete`,
        timeoutMs,
      );
    },
    async result(id) {
      const response = await api(`/v1/rollouts/${id}/result`);
      if (response.status !== 200) throw new Error(`result ${id}: ${await response.text()}`);
      return new Uint8Array(await response.arrayBuffer());
    },
    async syncWeights(component, version, bytes) {
      const upload = await api('/v1/blobs', {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      if (upload.status !== 201) throw new Error(`upload: ${await upload.text()}`);
      const { sha256 } = (await upload.json()) as { sha256: string };
      const sync = await api(`/v1/weights/${component}/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version, sha256 }),
      });
      if (sync.status !== 202) throw new Error(`sync: ${await sync.text()}`);
      return sha256;
    },
    api,
    async stopCoordinator() {
      await coordinator.close();
    },
    async startCoordinator() {
      coordinator = build();
      await coordinator.start(port);
    },
    async close() {
      await Promise.allSettled(workers.map((worker) => worker.close()));
      await coordinator.close();
      // Control-plane keys `{prefix}…` and lane queues `{prefix:<lane>}…`; on a cluster the
      // cluster itself is the test's (it is stopped whole), and KEYS would ask one node only.
      if (redisMode === 'standalone') {
        for (const pattern of [`{${prefix}}*`, `{${prefix}:*`]) {
          const keys = await redis.keys(pattern);
          if (keys.length > 0) await redis.del(...keys);
        }
      }
      await redis.quit();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
  return fleet;
}
