// Drives the dashboard in headless Chromium against a live coordinator on a real redis-server,
// with workers registered exactly as the worker app registers them (manifest, set, heartbeat).
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RolloutListSchema } from '@flowfleet/coordinator';
import {
  summarizeRollout,
  writeRolloutFile,
  writeSafetensors,
  type RolloutMetadata,
  type RolloutRecord,
} from '@flowfleet/formats';
import { fleetKeys, type SyncAck } from '@flowfleet/protocol';
import { Worker as BullWorker } from 'bullmq';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  TOKENS,
  componentRow,
  fakeManifest,
  kernelRow,
  registerFakeWorker,
  resultUpload,
  rolloutBody,
  startTestCoordinator,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { chromiumPath } from '../harness/prerequisites.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';

const CHROMIUM = chromiumPath();
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'artifacts');
/** The page refreshes every 2 s; a change must show within a few refreshes. */
const SHOWS_WITHIN_MS = 15_000;

const MANIFEST_A = fakeManifest('w-cpu-a');
const MANIFEST_B = fakeManifest('w-cpu-b', {
  platform: { device: 'cpu', arch: 'x86-64-v2', features: [] },
  kernels: [
    kernelRow('flow_sde_step', 'cpu', 'generic'),
    kernelRow('cfg_combine', 'cpu', 'generic', false),
    kernelRow('flow_sde_step', 'cpu', 'x86-64-v3', false),
  ],
  components: [componentRow('dit', 'cpu'), componentRow('text_encoder', 'cpu')],
  concurrency: 1,
});

let server: RedisServer;
let fixture: TestCoordinator;
let browser: BrowserContext;
let profileDir: string;
let page: Page;

const CHROMIUM_MISSING =
  `the dashboard test needs Chromium at ${CHROMIUM} and never skips: install it with ` +
  '`apt-get install -y chromium` or set FLOWFLEET_CHROMIUM (.ci/run installs it when missing)';

beforeAll(async () => {
  // Without Chromium every test fails (beforeEach below) with the fix; nothing is started.
  if (!existsSync(CHROMIUM)) return;
  server = await startRedisServer();
  fixture = await startTestCoordinator(server.url, 'dashboard');
  await registerFakeWorker(fixture.redis, fixture.prefix, MANIFEST_A, 60_000, 1);
  await registerFakeWorker(fixture.redis, fixture.prefix, MANIFEST_B, 60_000, 0);
  profileDir = await mkdtemp(join(tmpdir(), 'flowfleet-chromium-'));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
  });
  page = browser.pages()[0] ?? (await browser.newPage());
});

beforeEach(() => {
  if (!existsSync(CHROMIUM)) throw new Error(CHROMIUM_MISSING);
});

afterAll(async () => {
  await browser?.close();
  if (profileDir !== undefined) await rm(profileDir, { recursive: true, force: true });
  await fixture?.close();
  await server?.stop();
});

/** The browser globals the page functions below use (the repo compiles without lib.dom). */
interface BrowserGlobals {
  readonly document: {
    querySelector(selector: string): { readonly textContent: string | null } | null;
  };
  getComputedStyle(node: unknown): { readonly backgroundColor: string };
}

/** Waits (polling the DOM, with a deadline) until `selector`'s text includes `text`. */
async function waitForText(selector: string, text: string): Promise<void> {
  try {
    await page.waitForFunction(
      ([sel, expected]) =>
        (globalThis as unknown as BrowserGlobals).document
          .querySelector(sel)
          ?.textContent?.includes(expected) === true,
      [selector, text] as const,
      { timeout: SHOWS_WITHIN_MS, polling: 100 },
    );
  } catch (error) {
    const shown = await page
      .locator(selector)
      .first()
      .textContent({ timeout: 100 })
      .catch(() => null);
    throw new Error(`${selector} did not show "${text}" (shows ${JSON.stringify(shown)})`, {
      cause: error,
    });
  }
}

const cell = (key: string) => `[data-cell="${key}"]`;

async function api(method: string, path: string, role: keyof typeof TOKENS, body?: unknown) {
  const binary = body instanceof Buffer;
  return fetch(`${fixture.url}${path}`, {
    method,
    headers: {
      ...fixture.auth(role),
      ...(body === undefined
        ? {}
        : { 'content-type': binary ? 'application/octet-stream' : 'application/json' }),
    },
    ...(body === undefined ? {} : { body: binary ? body : JSON.stringify(body) }),
  });
}

function ack(workerId: string, version: number, status: SyncAck['status']): string {
  return JSON.stringify({
    workerId,
    component: 'dit',
    version,
    status,
    ...(status === 'ok' ? {} : { reason: 'sha256 mismatch' }),
    at: new Date().toISOString(),
  } satisfies SyncAck);
}

/** Frame geometry of the stored v2 result: a 9-frame 8×6 clip, frames 0, 4 and 8 returned. */
const VIDEO = { frames: 9, height: 6, width: 8 } as const;
const FRAME_INDICES = [0, 4, 8];
/** The request the records below answer: a result must describe the job it is stored under. */
const RECORDED_REQUEST = {
  steps: 2,
  sampler: 'sde',
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  shift: 3,
  negativePrompt: '',
  cfgRule: 'unless-one',
} as const;

/**
 * A rollout record of job `seeds` (T = 2, G = seeds.length): v2 with RGB frames that differ per
 * sample, frame, pixel and channel when `withFrames`, else v1 (latents only).
 */
function rolloutRecord(seeds: readonly number[], withFrames: boolean): RolloutRecord {
  const steps = 2;
  const group = seeds.length;
  const sigmas = Float64Array.from({ length: steps + 1 }, (_, i) => 1 - i / steps);
  const metadata = {
    model: 'wan21-mini',
    loopId: 'wan21.denoise',
    prompt: 'a red fox in snow',
    negativePrompt: '',
    sampler: 'sde',
    steps,
    group,
    latentDims: [4, 1, 2, 2],
    noiseLevel: 0.7,
    guidanceScale: 4.5,
    shift: 3,
    weightsVersions: { dit: 0 },
    backend: { dit: 'cpu-reference', vae: 'cpu-reference' },
    platform: { device: 'cpu', arch: 'x86-64-v3' },
    interceptors: [],
    ...(withFrames ? { video: VIDEO } : {}),
  } as RolloutMetadata;
  const frameBytes = VIDEO.height * VIDEO.width * 3;
  return {
    metadata,
    latents: Float32Array.from({ length: (steps + 1) * group * 16 }, (_, i) => i / 64),
    logProbs: new Float64Array(steps * group).fill(-1.5),
    seeds,
    sigmas,
    timesteps: sigmas.slice(0, steps).map((s) => 1000 * s),
    stepIndices: Int32Array.from({ length: steps }, (_, i) => i),
    ...(withFrames
      ? {
          frameIndices: Int32Array.from(FRAME_INDICES),
          frames: Uint8Array.from(
            { length: group * FRAME_INDICES.length * frameBytes },
            (_, i) => (i * 29 + Math.floor(i / frameBytes) * 71) % 256,
          ),
        }
      : {}),
  };
}

/** Sample `g`'s returned frame `at` of a record, as plain RGB numbers. */
function framePixels(record: RolloutRecord, g: number, at: number): number[] {
  const size = VIDEO.height * VIDEO.width * 3;
  const start = (g * FRAME_INDICES.length + at) * size;
  return Array.from(record.frames!.subarray(start, start + size));
}

interface DecodedImage {
  readonly width: number;
  readonly height: number;
  readonly rgb: number[];
}

/** The browser globals `decodedImage` uses (the repo compiles without lib.dom). */
interface CanvasGlobals {
  readonly document: {
    querySelector(selector: string): {
      readonly complete: boolean;
      readonly naturalWidth: number;
      readonly naturalHeight: number;
    } | null;
    createElement(tag: 'canvas'): {
      width: number;
      height: number;
      getContext(kind: '2d'): {
        drawImage(image: unknown, x: number, y: number): void;
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      };
    };
  };
}

/**
 * Runs in the page: the pixels of the loaded image `selector` as the browser decoded them (drawn
 * on a canvas) — its natural size and RGB bytes — or null until it has loaded. Throws when a
 * pixel is not opaque (the PNG has no alpha).
 */
function decodedImage(selector: string): DecodedImage | null {
  const { document } = globalThis as unknown as CanvasGlobals;
  const img = document.querySelector(selector);
  if (img === null || !img.complete || img.naturalWidth === 0) return null;
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(img, 0, 0);
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const rgb: number[] = [];
  for (let i = 0; i < rgba.length; i += 4) {
    if (rgba[i + 3] !== 255) throw new Error(`pixel ${i / 4} is not opaque`);
    rgb.push(rgba[i]!, rgba[i + 1]!, rgba[i + 2]!);
  }
  return { width: img.naturalWidth, height: img.naturalHeight, rgb };
}

/**
 * Scrolls the image `selector` into view (frames load lazily), waits (with a deadline) until it
 * has loaded, then gives its pixels.
 */
async function loadedImage(selector: string): Promise<DecodedImage> {
  // In one page-side step: the list re-renders every 2 s, replacing the element. The scroll
  // position stays, so the replacement is in view too.
  await page.waitForFunction(
    (sel) => {
      const { document } = globalThis as unknown as {
        document: { querySelector(s: string): { scrollIntoView(o: object): void } | null };
      };
      const node = document.querySelector(sel);
      node?.scrollIntoView({ block: 'center' });
      return node !== null;
    },
    selector,
    { timeout: SHOWS_WITHIN_MS, polling: 100 },
  );
  const handle = await page.waitForFunction(decodedImage, selector, {
    timeout: SHOWS_WITHIN_MS,
    polling: 100,
  });
  return (await handle.jsonValue()) as DecodedImage;
}

describe('dashboard in headless Chromium', () => {
  it('answers 401 with the token form without a token, and refuses a wrong one', async () => {
    const anonymous = await page.goto(`${fixture.url}/`);
    expect(anonymous?.status()).toBe(401);
    expect(await page.locator('#login').isVisible()).toBe(true);

    const wrong = await page.goto(`${fixture.url}/?token=not-a-real-token-0000000`);
    expect(wrong?.status()).toBe(401);
    expect(await page.locator('#login-error').textContent()).toContain('not accepted');
    expect(page.url()).not.toContain('token=');

    for (const path of ['/queues', '/queues/', '/queues/api/queues']) {
      expect((await fetch(`${fixture.url}${path}`)).status, path).toBe(401);
    }
  });

  it('shows the live workers: matrix cells shaded by count, workers with heartbeat age', async () => {
    const opened = await page.goto(`${fixture.url}/?token=${TOKENS.viewer}`);
    expect(opened?.status()).toBe(200);
    await waitForText(cell('kernel|flow_sde_step|cpu|generic|default'), '2');
    expect(page.url()).not.toContain(TOKENS.viewer);
    expect(
      await page.locator(cell('kernel|flow_match_step|cpu|generic|default')).textContent(),
    ).toBe('1');
    expect(await page.locator(cell('kernel|cfg_combine|cpu|generic|default')).textContent()).toBe(
      '1',
    );
    expect(await page.locator(cell('component|dit|cpu||default')).textContent()).toBe('2');
    const none = page.locator(cell('kernel|flow_sde_step|cpu|x86-64-v3|default'));
    expect(await none.textContent()).toBe('0');
    const shade = (selector: string) =>
      page
        .locator(selector)
        .evaluate(
          (node) =>
            (globalThis as unknown as BrowserGlobals).getComputedStyle(node).backgroundColor,
        );
    expect(await shade(cell('kernel|flow_sde_step|cpu|x86-64-v3|default'))).toBe(
      'rgb(229, 231, 235)',
    );
    expect(await shade(cell('kernel|flow_sde_step|cpu|generic|default'))).toMatch(
      /^rgba\(22, 163, 74, 0\.8\)$/,
    );
    expect(await page.locator('[data-card="live"] b').textContent()).toBe('2');
    expect(await page.locator('[data-worker="w-cpu-b"]').textContent()).toContain('x86-64-v2');
    expect(await page.locator('[data-heartbeat="w-cpu-a"]').textContent()).toMatch(/^\d+\.\d s$/);
  });

  it('shows a weight sync and each worker’s ack as the fleet reports them', async () => {
    await waitForText('[data-weight-current="dit"]', 'never synced');
    const file = writeSafetensors({ w: { dtype: 'F32', shape: [1], data: Float32Array.of(1) } });
    const blob = (await (await api('PUT', '/v1/blobs', 'trainer', Buffer.from(file))).json()) as {
      sha256: string;
    };
    const synced = await api('POST', '/v1/weights/dit/sync', 'trainer', {
      version: 1,
      sha256: blob.sha256,
    });
    expect(synced.status).toBe(202);
    // Synced, held by no worker yet: current is what live workers hold, latest what was synced.
    await waitForText('[data-weight-current="dit"]', 'current – · latest v1 pending');
    await waitForText('[data-ack="dit|1|w-cpu-a"]', 'pending');

    // What a worker does once it staged the blob: ack, then advertise the version.
    const keys = fleetKeys(fixture.prefix);
    await fixture.redis.hset(keys.acks('dit', 1), 'w-cpu-a', ack('w-cpu-a', 1, 'ok'));
    await registerFakeWorker(fixture.redis, fixture.prefix, { ...MANIFEST_A, weights: { dit: 1 } });
    await fixture.redis.hset(keys.acks('dit', 1), 'w-cpu-b', ack('w-cpu-b', 1, 'refused'));
    await waitForText('[data-ack="dit|1|w-cpu-a"]', 'ok');
    await waitForText('[data-ack="dit|1|w-cpu-b"]', 'refused');
    await waitForText('[data-version="dit|1"]', 'loaded');
    await waitForText('[data-weight-current="dit"]', 'current v1');
    await waitForText('[data-weights="w-cpu-a"]', 'dit v1');
    expect(await page.locator('[data-ack="dit|1|w-cpu-b"]').getAttribute('title')).toBe(
      'sha256 mismatch',
    );
  });

  it('lists recent rollouts with status and progress, lanes with backlog, and bull-board', async () => {
    const enqueued = (await (
      await api('POST', '/v1/rollouts', 'trainer', rolloutBody())
    ).json()) as {
      id: string;
      lane: string;
    };
    const listed = RolloutListSchema.parse(
      await (await api('GET', '/v1/rollouts?limit=5', 'viewer')).json(),
    );
    expect(listed.rollouts[0]).toMatchObject({ id: enqueued.id, status: 'queued', groupSize: 2 });
    await waitForText(`[data-rollout="${enqueued.id}"]`, 'queued');
    await waitForText(`[data-backlog="${enqueued.lane}"]`, '1');

    // A BullMQ worker takes the job and reports step progress, as the worker app does.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const worker = new BullWorker(
      enqueued.lane,
      async (job) => {
        await job.updateProgress({ step: 3, steps: 10 });
        await held;
        return {};
      },
      {
        connection: { host: server.host, port: server.port },
        prefix: fixture.coordinator.services.keys.laneBullPrefix(enqueued.lane),
        name: 'w-cpu-a',
      },
    );
    try {
      await waitForText(`[data-rollout="${enqueued.id}"]`, 'active');
      await waitForText(`[data-rollout="${enqueued.id}"]`, '3 / 10');
      await waitForText(`[data-rollout="${enqueued.id}"]`, 'w-cpu-a');
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
      release();
      await waitForText(`[data-rollout="${enqueued.id}"]`, 'completed');
    } finally {
      release();
      await worker.close();
    }

    // `/queues?token=` trades the token for the cookie and drops it from the URL.
    const traded = await fetch(`${fixture.url}/queues?token=${TOKENS.viewer}`, {
      redirect: 'manual',
    });
    expect(traded.status).toBe(303);
    expect(traded.headers.get('location')).toBe('/queues');
    expect(traded.headers.get('set-cookie')).toMatch(
      /^flowfleet_queues=[^;]+; Path=\/queues; HttpOnly; SameSite=Strict$/,
    );

    // bull-board takes the cookie `/?token=` set; its queue list shows the lane.
    const board = await page.goto(`${fixture.url}/queues`);
    expect(board?.status()).toBe(200);
    await page.getByText(enqueued.lane).first().waitFor({ timeout: SHOWS_WITHIN_MS });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-queues.png') });
    const readOnly = await page.evaluate(async (lane) => {
      const response = await fetch(`/queues/api/queues/${lane}/pause`, { method: 'PUT' });
      return response.status;
    }, enqueued.lane);
    expect(readOnly).toBe(403);
  });

  it('shows a thumbnail of each rollout’s first returned frame, and the strip on click', async () => {
    const withFrames = (await (
      await api('POST', '/v1/rollouts', 'trainer', rolloutBody(RECORDED_REQUEST))
    ).json()) as {
      id: string;
      lane: string;
    };
    const latentsOnly = (await (
      await api(
        'POST',
        '/v1/rollouts',
        'trainer',
        rolloutBody({ ...RECORDED_REQUEST, seeds: [3, 4] }),
      )
    ).json()) as { id: string; lane: string };
    const records = new Map([
      [withFrames.id, rolloutRecord([1, 2], true)],
      [latentsOnly.id, rolloutRecord([3, 4], false)],
    ]);
    // A stand-in worker stores each result through the real upload route, as the worker app does.
    const worker = new BullWorker(
      withFrames.lane,
      async (job) => {
        const record = records.get(job.id!);
        if (record === undefined) return {};
        const summary = summarizeRollout(job.id!, record, {
          worker: 'w-cpu-a',
          timings: { totalMs: 3, encodeMs: 1, denoiseMs: 2, captureMs: 0, stepMs: [1, 1] },
          captureStats: {
            captures: 0,
            replays: 0,
            eagerBreaks: 0,
            evictions: 0,
            liveGraphs: 0,
            bytesHeld: 0,
          },
        });
        // The attempt holding the job uploads (its lock token), as the worker app does.
        const upload = resultUpload(summary, writeRolloutFile(record), job.token);
        const stored = await fetch(`${fixture.url}/v1/results/${job.id}`, {
          method: 'PUT',
          headers: { ...fixture.auth('worker'), ...upload.headers },
          body: upload.payload,
        });
        if (stored.status !== 201) throw new Error(`upload answered ${stored.status}`);
        return summary;
      },
      {
        connection: { host: server.host, port: server.port },
        prefix: fixture.coordinator.services.keys.laneBullPrefix(withFrames.lane),
        name: 'w-cpu-a',
      },
    );
    // A short window: the rollouts list starts below it, so no frame may be fetched before a
    // thumbnail is scrolled into view.
    await page.setViewportSize({ width: 1400, height: 400 });
    const frameRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/frames/')) frameRequests.push(request.url());
    });
    try {
      await page.goto(`${fixture.url}/?token=${TOKENS.viewer}`);
      await waitForText(`[data-rollout="${withFrames.id}"]`, 'completed');
      await waitForText(`[data-rollout="${latentsOnly.id}"]`, 'completed');
    } finally {
      await worker.close();
    }
    const listed = RolloutListSchema.parse(
      await (await api('GET', '/v1/rollouts?limit=5', 'viewer')).json(),
    );
    const byId = new Map(listed.rollouts.map((r) => [r.id, r]));
    expect(byId.get(withFrames.id)?.frames).toEqual({
      indices: FRAME_INDICES,
      width: 8,
      height: 6,
    });
    expect(byId.get(latentsOnly.id)?.frames).toBeUndefined();

    // Lazy: two more renders of the list with the thumbnail out of view fetch no frame.
    const thumbSelector = `[data-rollout="${withFrames.id}"] img[data-frame="${withFrames.id}|0|0"]`;
    expect(await page.locator(thumbSelector).getAttribute('src')).toBeNull();
    for (let i = 0; i < 2; i++) {
      await page.waitForResponse((response) => response.url().includes('/v1/rollouts?limit='), {
        timeout: SHOWS_WITHIN_MS,
      });
    }
    expect(frameRequests).toEqual([]);

    // The thumbnail is sample 0's first returned frame, decoded by the browser from the PNG.
    const record = records.get(withFrames.id)!;
    const thumb = await loadedImage(thumbSelector);
    expect(thumb).toEqual({ width: 8, height: 6, rgb: framePixels(record, 0, 0) });
    // A rollout that returned no frames shows none (and asks for none).
    expect(await page.locator(`[data-rollout="${latentsOnly.id}"] img`).count()).toBe(0);

    // Click: the strip of sample 0's returned frames; then sample 1's.
    await page.locator(`[data-thumb="${withFrames.id}"]`).click();
    for (const [at, frame] of FRAME_INDICES.entries()) {
      const strip = await loadedImage(
        `[data-strip="${withFrames.id}"] img[data-frame="${withFrames.id}|0|${frame}"]`,
      );
      expect(strip.rgb, `sample 0, frame ${frame}`).toEqual(framePixels(record, 0, at));
    }
    await page.locator(`[data-strip-sample="${withFrames.id}|1"]`).click();
    for (const [at, frame] of FRAME_INDICES.entries()) {
      const strip = await loadedImage(
        `[data-strip="${withFrames.id}"] img[data-frame="${withFrames.id}|1|${frame}"]`,
      );
      expect(strip.rgb, `sample 1, frame ${frame}`).toEqual(framePixels(record, 1, at));
    }
    // Each frame was fetched once, whatever the re-renders in between.
    expect(new Set(frameRequests).size).toBe(frameRequests.length);
    await page.setViewportSize({ width: 1400, height: 900 });
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-frames.png'), fullPage: true });

    // The route: a cacheable PNG for a viewer; coded refusals otherwise.
    const png = await api('GET', `/v1/rollouts/${withFrames.id}/frames/1/4`, 'viewer');
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect((await fetch(`${fixture.url}/v1/rollouts/${withFrames.id}/frames/0/0`)).status).toBe(
      401,
    );
    const refusals: [string, number, string, string | undefined][] = [
      [`${latentsOnly.id}/frames/0/0`, 404, 'API_FRAME_NOT_FOUND', 'no-frames'],
      [`${withFrames.id}/frames/2/0`, 404, 'API_FRAME_NOT_FOUND', 'sample'],
      [`${withFrames.id}/frames/0/1`, 404, 'API_FRAME_NOT_FOUND', 'frame'],
      [`${withFrames.id}/frames/0/-1`, 400, 'API_INVALID_PARAMS', undefined],
      ['no-such-job/frames/0/0', 404, 'API_JOB_NOT_FOUND', undefined],
    ];
    for (const [path, status, code, reason] of refusals) {
      const answer = await api('GET', `/v1/rollouts/${path}`, 'viewer');
      const body = (await answer.json()) as { code: string; details: { reason?: string } };
      expect([answer.status, body.code, body.details.reason], path).toEqual([status, code, reason]);
    }
  });
});
