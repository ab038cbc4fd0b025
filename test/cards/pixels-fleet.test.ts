// Decoded frames through a real fleet (real Redis, real onnxruntime-node sessions in the worker's
// compute pool): the shipped wan21-mini-vae card (wan21-mini + the small Wan2.1 VAE decoder) on
// an ort-cpu worker returns `first` and every-k frames as RolloutFile v2, whose pixels equal the
// PyTorch decoder's (flowfleet.torch, the same weights, diffusers' uint8 quantisation) within one
// level; a kept-steps window returns fewer bytes; and the edge refuses what no worker could serve.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowfleetClient, type RolloutFile } from '@flowfleet/client';
import {
  encodePngRgb,
  readSafetensors,
  writeSafetensors,
  type SafetensorsTensor,
} from '@flowfleet/formats';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { wan21MiniVaeCard as card } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../harness/prerequisites.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, TOKENS, type TestFleet } from '../worker/fleet-fixture.js';

/** The worker's version-0 weights are `initWeights(INITIAL_WEIGHTS_SEED = 0)` (model-host.ts). */
const WORKER_INITIAL_SEED = 0;
/** After uint8 quantisation: ORT vs PyTorch float differences (≤ 1e-5) move a byte by at most 1. */
const PIXEL_TOLERANCE_LEVELS = 1;

const REQUEST = {
  model: card.id,
  prompt: 'a red fox in snow',
  seeds: [11, 12],
  steps: 4,
  guidanceScale: 1,
  shape: { frames: 2, height: 4, width: 4 },
};

let server: RedisServer;
let fleet: TestFleet;
let trainer: FlowfleetClient;
let work: string;

beforeAll(async () => {
  server = await startRedisServer();
  fleet = await startTestFleet(server.url, 'pixels', { cards: DEFAULT_CARD_REGISTRY });
  await fleet.startWorker({
    cards: DEFAULT_CARD_REGISTRY,
    models: [card.id, 'wan21-mini'],
    backend: 'ort-cpu',
  });
  trainer = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
  work = mkdtempSync(join(tmpdir(), 'ff-pixels-'));
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function run(extra: Record<string, unknown>): Promise<{ id: string; file: RolloutFile }> {
  const { id } = await trainer.enqueueRollouts({ ...REQUEST, ...extra });
  const status = await trainer.waitFor(id, { timeoutMs: 120_000 });
  expect(status.status, JSON.stringify(status)).toBe('completed');
  return { id, file: await trainer.getResult(id) };
}

/** The coordinator's answer to a raw POST /v1/rollouts: a 4xx with its code and field. */
async function refusal(body: Record<string, unknown>): Promise<{ code: string; field: unknown }> {
  const response = await fleet.api('/v1/rollouts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as {
    code: string;
    details: { field?: unknown; issues?: { path?: unknown }[] };
  };
  expect(response.status, JSON.stringify(answer)).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  const { details } = answer;
  return { code: answer.code, field: details.field ?? details.issues?.[0]?.path };
}

/** PyTorch's frames of each sample's final latent: uint8 [G, F, H, W, 3]. */
function torchFrames(file: RolloutFile): { dims: number[]; data: Uint8Array } {
  const vae = card.components.find((c) => c.id === 'vae')!;
  const weights: Record<string, SafetensorsTensor> = {};
  for (const [name, t] of vae.initWeights(WORKER_INITIAL_SEED)) {
    weights[name] = { dtype: 'F32', shape: t.dims, data: t.data as Float32Array };
  }
  const latents = new Float32Array(file.group * file.sampleSize);
  for (let g = 0; g < file.group; g++) latents.set(file.finalLatent(g), g * file.sampleSize);
  writeFileSync(join(work, 'vae.safetensors'), writeSafetensors(weights));
  writeFileSync(
    join(work, 'latents.safetensors'),
    writeSafetensors({
      latents: { dtype: 'F32', shape: [file.group, ...file.latentDims], data: latents },
    }),
  );
  const script = fileURLToPath(new URL('./decode_frames_torch.py', import.meta.url));
  const out = join(work, 'frames.safetensors');
  execFileSync(
    venvPython(),
    [script, 'mini', join(work, 'vae.safetensors'), join(work, 'latents.safetensors'), out],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 },
  );
  const frames = readSafetensors(new Uint8Array(readFileSync(out))).tensors.get('frames')!;
  return { dims: [...frames.shape], data: frames.data as Uint8Array };
}

/** Largest |fleet − torch| over the fleet file's frames, and how many bytes differ at all. */
function compare(file: RolloutFile, torch: { dims: number[]; data: Uint8Array }) {
  const [, clipFrames = 0, h = 0, w = 0] = torch.dims;
  const size = h * w * 3;
  let maxDiff = 0;
  let differing = 0;
  let total = 0;
  for (let g = 0; g < file.group; g++) {
    file.frameIndices!.forEach((f, at) => {
      const mine = file.frame(g, at);
      const start = (g * clipFrames + f) * size;
      for (let i = 0; i < size; i++) {
        const d = Math.abs(mine[i]! - torch.data[start + i]!);
        maxDiff = Math.max(maxDiff, d);
        if (d > 0) differing += 1;
        total += 1;
      }
    });
  }
  return { maxDiff, differing, total };
}

describe('decoded frames through the fleet (wan21-mini-vae on ort-cpu)', () => {
  it('refuses at the edge, with a coded 4xx, what no worker could serve', async () => {
    const before = (await trainer.lanes()).lanes.length;
    // A card without a frame decoder: its rules refuse frames.
    expect(await refusal({ ...REQUEST, model: 'wan21-mini', decodeFrames: 'first' })).toEqual({
      code: 'MODEL_INVALID_REQUEST',
      field: 'decodeFrames',
    });
    // Malformed selections: the request schema.
    for (const decodeFrames of [{ every: 0 }, 'some', { every: 2, extra: 1 }]) {
      expect((await refusal({ ...REQUEST, decodeFrames })).code).toBe('PROTO_INVALID_REQUEST');
    }
    expect((await refusal({ ...REQUEST, keepLatents: { fromStep: -1, steps: 1 } })).code).toBe(
      'PROTO_INVALID_REQUEST',
    );
    // A window past the rollout's steps: the card's rules.
    expect(await refusal({ ...REQUEST, keepLatents: { fromStep: 3, steps: 2 } })).toEqual({
      code: 'MODEL_INVALID_REQUEST',
      field: 'keepLatents',
    });
    // Frames the result store could not hold (16 samples × 61 frames of 512×512 RGB = 767 MB >
    // maxBlobBytes 256 MiB), refused before any worker decodes them; fewer frames pass.
    const big = {
      ...REQUEST,
      seeds: Array.from({ length: 16 }, (_, i) => i),
      shape: { frames: 16, height: 64, width: 64 },
    };
    expect(await refusal({ ...big, decodeFrames: 'all' })).toEqual({
      code: 'PROTO_INVALID_REQUEST',
      field: ['decodeFrames'],
    });
    // Nothing changed: no lane was made for the refused requests.
    expect((await trainer.lanes()).lanes.length).toBe(before);
  });

  it("returns `first` and every-2 frames equal to PyTorch's decode within one level", async () => {
    const first = await run({ decodeFrames: 'first' });
    const every = await run({ decodeFrames: { every: 2 }, keepLatents: { fromStep: 0, steps: 1 } });
    for (const { file } of [first, every]) {
      expect(file.formatVersion).toBe('2');
      expect(file.video).toEqual({ frames: 5, height: 32, width: 32 });
    }
    expect(Array.from(first.file.frameIndices!)).toEqual([0]);
    expect(Array.from(every.file.frameIndices!)).toEqual([0, 2, 4]);
    expect(Array.from(every.file.latentSteps)).toEqual([0, 1, 4]);
    // Same job parameters, same trajectory: the same final latents decode to the same frame 0.
    expect(every.file.finalLatent(1)).toEqual(first.file.finalLatent(1));
    expect(every.file.frame(1, 0)).toEqual(first.file.frame(1, 0));

    const torch = torchFrames(every.file);
    expect(torch.dims).toEqual([2, 5, 32, 32, 3]);
    for (const { file } of [first, every]) {
      const { maxDiff, differing, total } = compare(file, torch);
      console.log(
        `[pixels] fleet vs torch: max ${maxDiff} level(s), ${differing}/${total} bytes differ`,
      );
      expect(maxDiff).toBeLessThanOrEqual(PIXEL_TOLERANCE_LEVELS);
      expect(differing).toBeLessThan(total / 100);
    }
    // The frames are an image, not a constant: a decode that returned zeros would fail above,
    // and so would one whose bytes are spread over the full range by chance.
    const bytes = every.file.frames!;
    expect(new Set(bytes).size).toBeGreaterThan(16);

    const summary = await trainer.storedSummary(every.id);
    expect(summary).toMatchObject({
      video: { frames: 5, height: 32, width: 32 },
      frameIndices: [0, 2, 4],
      latentSteps: [0, 1, 4],
    });
    expect(JSON.stringify(summary).length).toBeLessThan(4_000);
  }, 300_000);

  it('writes a latents-only request as before (v1), and a kept-steps window cuts the payload', async () => {
    const all = await run({});
    const window = await run({ keepLatents: { fromStep: 0, steps: 1 } });
    expect(all.file.formatVersion).toBe('1');
    expect(window.file.formatVersion).toBe('2');
    expect(window.file.video).toBeNull();
    expect(window.file.latent(1, 0)).toEqual(all.file.latent(1, 0));
    const allBytes = (await fleet.result(all.id)).length;
    const windowBytes = (await fleet.result(window.id)).length;
    // 2 of the 5 latent rows (G · 4·2·4·4 float32 each) are gone; the rest is header and
    // latent_steps.
    const row = 2 * 4 * 2 * 4 * 4 * 4;
    expect(allBytes - windowBytes).toBeGreaterThan(2 * row - 200);
    console.log(
      `[pixels] result bytes: every latent ${allBytes}, window {fromStep 0, steps 1} of 4 steps ${windowBytes} (${((1 - windowBytes / allBytes) * 100).toFixed(1)} % less)`,
    );
  }, 300_000);

  it('lists the frames a worker returned and serves each as a PNG (the dashboard’s thumbnails)', async () => {
    const { id, file } = await run({ decodeFrames: { every: 2 } });
    const listed = (await (await fleet.api('/v1/rollouts?limit=20')).json()) as {
      rollouts: { id: string; frames?: unknown }[];
    };
    expect(listed.rollouts.find((r) => r.id === id)?.frames).toEqual({
      indices: [0, 2, 4],
      width: 32,
      height: 32,
    });
    for (const [at, frame] of [
      [0, 0],
      [2, 4],
    ] as const) {
      const response = await fleet.api(`/v1/rollouts/${id}/frames/1/${frame}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      // The encoder is deterministic: the route served exactly this frame of the worker's file.
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(
        encodePngRgb(file.frame(1, at), 32, 32),
      );
    }
  });
});
