// Shared set-up for the coordinator tests: a coordinator on a real redis-server with its own key
// prefix and blob dir, and a fake worker that writes its manifest and heartbeat exactly as the
// worker app does (the layout of protocol's fleetKeys).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { coordinatorKeys, createCoordinator, type Coordinator } from '@flowfleet/coordinator';
import { summarizeRollout, type RolloutSummary } from '@flowfleet/formats';
import {
  DEFAULT_LIMITS,
  JOB_LOCK_HEADER,
  SUMMARY_BYTES_HEADER,
  fleetKeys,
  type Limits,
  type ManifestRow,
  type WorkerHeartbeat,
  type WorkerManifest,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { uniquePrefix } from '../harness/redis-server.js';

export const TOKENS = {
  trainer: 'trainer-token-0123456789abcdef',
  viewer: 'viewer-token-0123456789abcdef',
  worker: 'worker-token-0123456789abcdef',
} as const;

/** A started coordinator plus what a test needs around it. */
export interface TestCoordinator {
  readonly coordinator: Coordinator;
  readonly url: string;
  readonly prefix: string;
  readonly blobDir: string;
  /** A separate client for the test's own reads and writes. */
  readonly redis: Redis;
  /** `Authorization` header of a role. */
  auth(role: keyof typeof TOKENS): { authorization: string };
  /** Closes the coordinator, deletes the prefix's keys and the blob dir. */
  close(): Promise<void>;
}

/** Starts a coordinator on `redisUrl` under a fresh prefix. */
export async function startTestCoordinator(
  redisUrl: string,
  name: string,
  options: { limits?: Partial<Limits>; heartbeatTtlMs?: number } = {},
): Promise<TestCoordinator> {
  const prefix = uniquePrefix(name);
  const blobDir = await mkdtemp(join(tmpdir(), 'flowfleet-coord-'));
  const coordinator = createCoordinator({
    redisUrl,
    prefix,
    tokens: TOKENS,
    blobDir,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    ...(options.heartbeatTtlMs !== undefined ? { heartbeatTtlMs: options.heartbeatTtlMs } : {}),
  });
  const url = await coordinator.start(0);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  return {
    coordinator,
    url,
    prefix,
    blobDir,
    redis,
    auth: (role) => ({ authorization: `Bearer ${TOKENS[role]}` }),
    async close() {
      await coordinator.close();
      const keys = await redis.keys(`{${prefix}}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
}

/** A kernel manifest row as the registry's `manifest()` emits it. */
export function kernelRow(
  op: string,
  device: string,
  arch: string,
  available = true,
  variant = 'default',
): ManifestRow {
  return {
    registry: 'kernels',
    key: { op, device, arch, variant },
    available,
    ...(available ? {} : { reason: 'not available in this test' }),
    source: 'test',
    meta: {},
  };
}

/** A component manifest row. */
export function componentRow(kind: string, device: string, available = true): ManifestRow {
  return {
    registry: 'components',
    key: { kind, device, variant: 'default' },
    available,
    source: 'test',
    meta: {},
  };
}

/** A plausible cpu worker manifest that can run wan21-mini with both samplers. */
export function fakeManifest(
  workerId: string,
  overrides: Partial<WorkerManifest> = {},
): WorkerManifest {
  return {
    workerId,
    host: 'test-host',
    pid: 4242,
    platform: { device: 'cpu', arch: 'x86-64-v3', features: ['avx2'] },
    kernels: [
      kernelRow('flow_match_step', 'cpu', 'generic'),
      kernelRow('flow_sde_step', 'cpu', 'generic'),
      kernelRow('cfg_combine', 'cpu', 'generic'),
    ],
    components: [componentRow('dit', 'cpu'), componentRow('text_encoder', 'cpu')],
    models: ['wan21-mini'],
    concurrency: 2,
    weights: {},
    startedAt: new Date().toISOString(),
    version: '0.1.0',
    ...overrides,
  };
}

/**
 * Registers a worker the way the worker app does: manifest first, then set membership, then a
 * heartbeat with a TTL (the worker is live while that key exists).
 */
export async function registerFakeWorker(
  redis: RedisClient,
  prefix: string,
  manifest: WorkerManifest,
  heartbeatTtlMs = 60_000,
  activeJobs = 0,
): Promise<void> {
  const keys = fleetKeys(prefix);
  const heartbeat: WorkerHeartbeat = {
    workerId: manifest.workerId,
    at: new Date().toISOString(),
    activeJobs,
    lanes: [],
  };
  await redis
    .multi()
    .set(keys.worker(manifest.workerId), JSON.stringify(manifest))
    .sadd(keys.workers, manifest.workerId)
    .set(keys.heartbeat(manifest.workerId), JSON.stringify(heartbeat), 'PX', heartbeatTtlMs)
    .exec();
}

/** Polls `check` until it returns true or the deadline passes. */
export async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A minimal valid rollout request body. */
export function rolloutBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'wan21-mini', prompt: 'a red fox in snow', seeds: [1, 2], ...overrides };
}

/** A well-formed summary of job `id` (what a worker uploads), for stand-in workers. */
export function summaryFor(
  id: string,
  seeds: readonly number[],
  steps: number,
  worker = 'w-e2e',
): RolloutSummary {
  const sigmas = Float64Array.from({ length: steps + 1 }, (_, i) => 1 - i / steps);
  const group = seeds.length;
  const latentDims = [4, 1, 2, 2];
  return summarizeRollout(
    id,
    {
      metadata: {
        model: 'wan21-mini',
        loopId: 'wan21.denoise',
        prompt: 'a red fox in snow',
        negativePrompt: '',
        sampler: 'sde',
        steps,
        group,
        latentDims,
        noiseLevel: 0.7,
        guidanceScale: 4.5,
        shift: 3,
        weightsVersions: { dit: 0 },
        backend: { dit: 'cpu-reference', text_encoder: 'cpu-reference' },
        platform: { device: 'cpu', arch: 'x86-64-v3' },
        interceptors: [],
      },
      latents: new Float32Array((steps + 1) * group * 16),
      logProbs: new Float64Array(steps * group).fill(-1.5),
      seeds,
      sigmas,
      timesteps: sigmas.slice(0, steps).map((s) => 1000 * s),
      stepIndices: Int32Array.from({ length: steps }, (_, i) => i),
    },
    {
      worker,
      timings: {
        totalMs: 5,
        encodeMs: 1,
        denoiseMs: steps,
        captureMs: 0,
        stepMs: Array.from({ length: steps }, () => 1),
      },
      captureStats: {
        captures: 0,
        replays: 0,
        eagerBreaks: 0,
        evictions: 0,
        liveGraphs: 0,
        bytesHeld: 0,
      },
    },
  );
}

/** A job a stand-in worker holds: its id, payload and the lock token it holds it with. */
export interface HeldTestJob {
  readonly id: string;
  readonly data: unknown;
  readonly lockToken: string;
  /** Stops the stand-in worker (the lock lapses by itself). */
  close(): Promise<void>;
}

/**
 * Takes the next waiting job of `lane` under a BullMQ lock, as the worker app does (a Worker that
 * is never run, `getNextJob(token)`), so that a test can upload its result as the holder.
 * @throws Error when no job is waiting
 */
export async function holdNextJob(fixture: TestCoordinator, lane: string): Promise<HeldTestJob> {
  const worker = new Worker(lane, null, {
    connection: fixture.redis,
    prefix: coordinatorKeys(fixture.prefix).laneBullPrefix(lane),
    autorun: false,
    lockDuration: 30_000,
  });
  const lockToken = `stand-in:${randomUUID()}`;
  try {
    const job = await worker.getNextJob(lockToken, { block: false });
    if (job?.id === undefined) throw new Error(`no job waiting in ${lane}`);
    return { id: job.id, data: job.data, lockToken, close: () => worker.close() };
  } catch (error) {
    await worker.close();
    throw error;
  }
}

/** The body and headers of `PUT /v1/results/:id`: the summary's bytes, then the result's. */
export function resultUpload(
  summary: unknown,
  result: Uint8Array,
  lockToken = 'no-lock',
): { headers: Record<string, string>; payload: Buffer } {
  const summaryBytes = Buffer.from(typeof summary === 'string' ? summary : JSON.stringify(summary));
  return {
    headers: {
      'content-type': 'application/octet-stream',
      [SUMMARY_BYTES_HEADER]: String(summaryBytes.byteLength),
      [JOB_LOCK_HEADER]: lockToken,
    },
    payload: Buffer.concat([summaryBytes, result]),
  };
}
