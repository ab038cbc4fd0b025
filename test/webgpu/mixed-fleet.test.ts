// A mixed fleet on one machine: a real coordinator and Redis, and two worker processes started as
// an operator starts them — FLOWFLEET_DEVICE=cpu and FLOWFLEET_DEVICE=webgpu (here lavapipe, a
// software adapter) — each running real ONNX Runtime sessions. Jobs land only where their
// constraints allow, the matrix, /v1/scaling and the dashboard show both device classes.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import {
  FleetSchema,
  MatrixSchema,
  ScalingSchema,
  type Fleet,
  type JobStatus,
} from '@flowfleet/protocol';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, STARTUP_TIMEOUT_MS, type ChildWorker } from '../fleet/child-worker.js';
import { chromiumPath } from '../harness/prerequisites.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  startTestFleet,
  TOKENS,
  tinyRollout,
  waitUntil,
  type TestFleet,
} from '../worker/fleet-fixture.js';

let server: RedisServer;
let fleet: TestFleet;
const workers: ChildWorker[] = [];
const CPU_WORKER = 'mixed-cpu';
const WEBGPU_WORKER = 'mixed-webgpu';

function workerEnv(device: 'cpu' | 'webgpu'): Record<string, string> {
  return {
    REDIS_URL: fleet.redisUrl,
    FLOWFLEET_COORDINATOR_URL: fleet.url,
    FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
    FLOWFLEET_PREFIX: fleet.prefix,
    FLOWFLEET_DEVICE: device,
    FLOWFLEET_POLL_MS: '200',
    FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
    FLOWFLEET_PEER_PORT: 'off',
  };
}

async function waitForHeartbeat(worker: ChildWorker): Promise<void> {
  const key = coordinatorKeys(fleet.prefix).heartbeat(worker.workerId);
  await waitUntil(
    async () => {
      if (worker.process.exitCode !== null) {
        throw new Error(`worker ${worker.workerId} exited:\n${worker.output()}`);
      }
      return (await fleet.redis.exists(key)) === 1 ? true : undefined;
    },
    `worker ${worker.workerId} to register`,
    STARTUP_TIMEOUT_MS,
  );
}

async function json(path: string): Promise<unknown> {
  const response = await fleet.api(path);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as unknown;
}

async function fleetView(): Promise<Fleet> {
  return FleetSchema.parse(await json('/v1/fleet'));
}

/** Enqueues `count` rollouts under `constraints` and returns where each completed. */
async function runOn(constraints: Record<string, unknown>, count: number): Promise<JobStatus[]> {
  const jobs = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      fleet.enqueue(tinyRollout({ seeds: [100 + i, 200 + i], constraints })),
    ),
  );
  return Promise.all(jobs.map((job) => fleet.waitForCompletion(job.id, 60_000)));
}

beforeAll(async () => {
  server = await startRedisServer();
  fleet = await startTestFleet(server.url, 'mixed-fleet');
  workers.push(spawnWorker(CPU_WORKER, workerEnv('cpu')));
  workers.push(spawnWorker(WEBGPU_WORKER, workerEnv('webgpu')));
  await Promise.all(workers.map(waitForHeartbeat));
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
  await fleet?.close();
  await server?.stop();
});

describe('a fleet of one cpu and one webgpu worker', () => {
  it('registers each as its own device class, the webgpu one from what its adapter says', async () => {
    const view = await fleetView();
    const byId = new Map(view.workers.map((w) => [w.workerId, w]));
    const cpu = byId.get(CPU_WORKER);
    const webgpu = byId.get(WEBGPU_WORKER);
    expect(cpu?.platform.device).toBe('cpu');
    expect(webgpu?.platform).toMatchObject({ device: 'webgpu', arch: 'software' });
    expect(webgpu?.platform.features).toContain('adapter.fallback');
    expect(webgpu?.platform.features.some((f) => f.startsWith('adapter.device:'))).toBe(true);
  });

  it('runs a webgpu-only job on the webgpu worker alone, on onnxruntime-webgpu', async () => {
    const done = await runOn({ devices: ['webgpu'] }, 2);
    for (const status of done) {
      expect(status.worker).toBe(WEBGPU_WORKER);
      expect(status.summary?.platform).toEqual({ device: 'webgpu', arch: 'software' });
      expect(status.summary?.backend).toMatchObject({ dit: 'ort-webgpu' });
    }
    const cpuOnly = await runOn({ devices: ['cpu'] }, 1);
    expect(cpuOnly[0]?.worker).toBe(CPU_WORKER);
    expect(cpuOnly[0]?.summary?.backend).toMatchObject({ dit: 'ort-cpu' });
  }, 120_000);

  it('runs a job that allows both on either, each recording the device it ran on', async () => {
    const done = await runOn({ devices: ['cpu', 'webgpu'] }, 4);
    for (const status of done) {
      expect([CPU_WORKER, WEBGPU_WORKER]).toContain(status.worker);
      const device = status.worker === WEBGPU_WORKER ? 'webgpu' : 'cpu';
      expect(status.summary?.platform?.device).toBe(device);
    }
  }, 120_000);

  it('refuses a job that asks for a hardware adapter, saying the webgpu worker is software', async () => {
    const response = await fleet.api('/v1/rollouts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        tinyRollout({ constraints: { devices: ['webgpu'], adapter: 'hardware' } }),
      ),
    });
    const body = (await response.json()) as { code: string; details: unknown };
    expect(response.status).toBe(409);
    expect(body.code).toBe('API_NO_CAPACITY');
    expect(JSON.stringify(body.details)).toContain(
      'is a software adapter; the job asks for hardware',
    );
    // …and takes one that asks for a software adapter: only the emulated worker serves it.
    const soft = await runOn({ devices: ['webgpu'], adapter: 'software' }, 1);
    expect(soft[0]?.worker).toBe(WEBGPU_WORKER);
  }, 120_000);

  it('shows both device classes with real counts in the matrix and /v1/scaling', async () => {
    const matrix = MatrixSchema.parse(await json('/v1/fleet/matrix'));
    expect(matrix.liveWorkers).toBe(2);
    const count = (registry: string, name: string, device: string) =>
      matrix.cells.find((c) => c.registry === registry && c.name === name && c.device === device)
        ?.liveWorkers;
    // The webgpu component cells count the webgpu worker only (one device per worker process);
    // the cpu rungs count both (a webgpu worker's chain ends in cpu).
    expect(count('component', 'dit', 'webgpu')).toBe(1);
    expect(count('component', 'text_encoder', 'webgpu')).toBe(1);
    expect(count('component', 'dit', 'cpu')).toBe(2);
    expect(count('kernel', 'flow_sde_step', 'cpu')).toBe(2);

    const scaling = ScalingSchema.parse(await json('/v1/scaling'));
    const cpuClass = (await fleetView()).workers.find((w) => w.workerId === CPU_WORKER)!.platform;
    const classes = Object.fromEntries(scaling.classes.map((c) => [c.deviceClass, c]));
    expect(classes['webgpu/software']).toMatchObject({ workers: 1, capacity: 1, source: 'live' });
    expect(classes[`cpu/${cpuClass.arch}`]).toMatchObject({ workers: 1, capacity: 1 });
  });

  it('shows both device classes on the dashboard, the software adapter marked emulated', async () => {
    const executablePath = chromiumPath();
    expect(existsSync(executablePath), `Chromium at ${executablePath}`).toBe(true);
    const profile = await mkdtemp(join(tmpdir(), 'flowfleet-chromium-'));
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      expect((await page.goto(`${fleet.url}/?token=${TOKENS.viewer}`))?.status()).toBe(200);
      const webgpu = page.locator('[data-device-class="webgpu/software"]');
      await webgpu.waitFor({ timeout: 15_000 });
      expect(await webgpu.textContent()).toBe('webgpu/software × 1');
      expect(await page.locator('[data-device-class^="cpu/"]').textContent()).toMatch(/ × 1$/);
      const platform = page.locator(`[data-platform="${WEBGPU_WORKER}"]`);
      expect(await platform.textContent()).toBe('webgpu · software emulated');
      expect(await platform.getAttribute('title')).toMatch(/^adapter: llvmpipe/);
      expect(await page.locator(`[data-platform="${CPU_WORKER}"]`).textContent()).toMatch(
        /^cpu · \S+ $/,
      );
      await page.screenshot({ path: join(tmpdir(), 'flowfleet-mixed-fleet-dashboard.png') });
    } finally {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    }
  }, 60_000);
});
