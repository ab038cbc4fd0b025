// Text embeddings by reference, end to end on a real fleet: a reduced card of the 1.3B card's
// architecture (the wan21-mini DiT, text input = embeddings, no text encoder) served by an
// ONNX Runtime worker; the trainer uploads safetensors embeddings and names them in requests.
// The edge refuses a missing blob and a wrong header before the 202; a blob whose values are not
// finite fails its job with a coded error and changes nothing else; a group fetches its
// embeddings once per worker; the result is the TS reference's rollout within float tolerance.
import { FlowfleetClient, uploadPromptEmbeds } from '@flowfleet/client';
import { isFlowfleetError } from '@flowfleet/errors';
import { float32ToBfloat16, writeSafetensors, type SafetensorsTensors } from '@flowfleet/formats';
import { createCardRegistry, DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { createWan21Card, WAN21_MINI } from '@flowfleet/models/wan21';
import { gaussianNoise } from '@flowfleet/numerics';
import { ComputePool } from '@flowfleet/platform';
import { ModelInstance, runRollout } from '@flowfleet/runtime';
import { INITIAL_WEIGHTS_SEED, type FlowfleetWorker } from '@flowfleet/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { cpuPlatform } from '../runtime/runtime-fixtures.js';
import { startTestFleet, TOKENS, type TestFleet } from '../worker/fleet-fixture.js';

/**
 * The 1.3B card's structure at the mini size: embeddings [L ≤ 16, 64], zero-padded to 16 (the
 * shipped wan21-mini-embeds with 3 steps and a 4×4 latent by default, under its own id).
 */
const card = createWan21Card({
  id: 'wan21-mini-embeds-s3',
  config: WAN21_MINI,
  textInput: 'embeddings',
  sampling: { steps: 3, shift: 3, guidanceScale: 4.5, noiseLevel: 0.7, sampler: 'sde' },
  latent: { frames: 1, height: 4, width: 4 },
});
const cards = createCardRegistry([...DEFAULT_CARD_REGISTRY.cards, card]);
const { textDim: DIM } = WAN21_MINI;

let server: RedisServer;
let fleet: TestFleet;
let worker: FlowfleetWorker;
let trainer: FlowfleetClient;
let pool: ComputePool;

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  server = await startRedisServer();
  fleet = await startTestFleet(server.url, 'embeds-fleet', { cards });
  worker = await fleet.startWorker({ cards, models: [card.id], backend: 'ort-cpu' });
  trainer = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
}, 60_000);

afterAll(async () => {
  await fleet?.close();
  await server?.stop();
  await pool?.close();
});

function embedsBlob(tokens: number, seed: number, dtype: 'F32' | 'BF16' = 'BF16'): Uint8Array {
  const values = gaussianNoise(seed, 0, tokens * DIM);
  const tensors: SafetensorsTensors = {
    prompt_embeds:
      dtype === 'F32'
        ? { dtype, shape: [tokens, DIM], data: values }
        : { dtype, shape: [tokens, DIM], data: float32ToBfloat16(values) },
  };
  return writeSafetensors(tensors);
}

async function upload(bytes: Uint8Array): Promise<{ sha256: string }> {
  return { sha256: (await trainer.uploadBlob(bytes)).sha256 };
}

async function codeOf(promise: Promise<unknown>): Promise<[string, Record<string, unknown>]> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) {
      return [error.code, (error.details['error'] ?? error.details) as Record<string, unknown>];
    }
    throw error;
  }
  return ['no error', {}];
}

describe('text embeddings by reference', () => {
  it('runs a group on its uploaded embeddings, fetched once per worker, as the reference does', async () => {
    // The SDK's upload (BF16 and F32) gives the same references as the bytes written by hand.
    const [promptEmbeds, negativePromptEmbeds] = await uploadPromptEmbeds(trainer, [
      { tokens: 5, dim: DIM, data: gaussianNoise(1, 0, 5 * DIM) },
    ]).then(async ([prompt]) => [
      prompt!,
      // The empty negative prompt is an embedding too (umT5's one EOS row).
      (
        await uploadPromptEmbeds(
          trainer,
          [{ tokens: 1, dim: DIM, data: gaussianNoise(2, 0, DIM) }],
          'F32',
        )
      )[0]!,
    ]);
    expect(promptEmbeds).toEqual(await upload(embedsBlob(5, 1)));
    expect(negativePromptEmbeds).toEqual(await upload(embedsBlob(1, 2, 'F32')));
    const request = { model: card.id, prompt: 'a red fox', seeds: [1, 2, 3] };
    const first = await trainer.enqueueRollouts({ ...request, promptEmbeds, negativePromptEmbeds });
    expect((await trainer.waitFor(first.id, { timeoutMs: 30_000 })).status).toBe('completed');
    // A second job of the same prompt: no fetch (cache by sha256).
    const second = await trainer.enqueueRollouts({
      ...request,
      seeds: [4],
      promptEmbeds,
      negativePromptEmbeds,
    });
    expect((await trainer.waitFor(second.id, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(worker.stats().embeds.fetches).toBe(2);
    expect(worker.stats().embeds.cacheBytes).toBe((5 + 1) * DIM * 4);

    // ORT on the worker against the TS reference here, same weights and embeddings.
    const file = await trainer.getResult(first.id);
    expect(file.metadata).toMatchObject({ model: card.id, steps: 3, guidanceScale: 4.5 });
    const local = await ModelInstance.create({
      card,
      platform: cpuPlatform(pool),
      weights: {
        dit: {
          version: 0,
          weights: { id: 'local', tensors: card.components[0]!.initWeights(INITIAL_WEIGHTS_SEED) },
        },
      },
    });
    try {
      const decode = (tokens: number, seed: number, bf16: boolean) => {
        const values = gaussianNoise(seed, 0, tokens * DIM);
        const data = bf16 ? new Float32Array(values.length) : values;
        if (bf16) {
          // BF16 keeps the top 16 bits (round to nearest even): what the worker widens back.
          const bits = float32ToBfloat16(values);
          new Uint32Array(data.buffer).set(Uint32Array.from(bits, (b) => b << 16));
        }
        return { tokens, dim: DIM, data };
      };
      const expected = await runRollout(local, {
        ...request,
        promptEmbeds,
        negativePromptEmbeds,
        textEmbeddings: { prompt: decode(5, 1, true), negativePrompt: decode(1, 2, false) },
      });
      let maxDiff = 0;
      for (let i = 0; i < file.latents.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(file.latents[i]! - expected.record.latents[i]!));
      }
      expect(file.latents.length).toBe(expected.record.latents.length);
      expect(maxDiff).toBeLessThan(1e-3);
      expect(maxDiff).toBeGreaterThan(0); // ORT really ran (bit-equal would mean the reference).
    } finally {
      await local.close();
    }
  }, 90_000);

  it('refuses at the edge a missing blob, a wrong header or a missing reference (4xx, nothing queued)', async () => {
    const promptEmbeds = await upload(embedsBlob(3, 3));
    const base = {
      model: card.id,
      prompt: 'p',
      seeds: [1],
      promptEmbeds,
      negativePromptEmbeds: promptEmbeds,
    };
    const before = (await trainer.lanes()).lanes.length;
    const [missing, missingDetails] = await codeOf(
      trainer.enqueueRollouts({ ...base, promptEmbeds: { sha256: 'e'.repeat(64) } }),
    );
    expect(missing).toBe('API_EMBEDS_NOT_FOUND');
    expect(missingDetails).toMatchObject({ field: 'promptEmbeds' });
    const wide = await upload(
      writeSafetensors({
        e: { dtype: 'F32', shape: [3, DIM + 1], data: new Float32Array(3 * (DIM + 1)) },
      }),
    );
    const [dims, dimsDetails] = await codeOf(
      trainer.enqueueRollouts({ ...base, negativePromptEmbeds: wide }),
    );
    expect(dims).toBe('API_EMBEDS_INVALID');
    expect(dimsDetails).toMatchObject({ field: 'negativePromptEmbeds', rule: 'dims' });
    const long = await upload(embedsBlob(WAN21_MINI.textLen + 1, 4, 'F32'));
    const [rows, rowsDetails] = await codeOf(
      trainer.enqueueRollouts({ ...base, promptEmbeds: long }),
    );
    expect([rows, rowsDetails['rule']]).toEqual(['API_EMBEDS_INVALID', 'dims']);
    const f64 = await upload(
      writeSafetensors({ e: { dtype: 'F64', shape: [2, DIM], data: new Float64Array(2 * DIM) } }),
    );
    const [dtype, dtypeDetails] = await codeOf(
      trainer.enqueueRollouts({ ...base, promptEmbeds: f64 }),
    );
    expect([dtype, dtypeDetails['rule']]).toEqual(['API_EMBEDS_INVALID', 'dtype']);
    const [absent, absentDetails] = await codeOf(
      trainer.enqueueRollouts({ model: card.id, prompt: 'p', seeds: [1], promptEmbeds }),
    );
    expect([absent, absentDetails['field']]).toEqual([
      'MODEL_INVALID_REQUEST',
      'negativePromptEmbeds',
    ]);
    expect((await trainer.lanes()).lanes.length).toBe(before);
  });

  it('fails a job whose embedding is not finite, with a coded error, and changes nothing else', async () => {
    const values = gaussianNoise(5, 0, 4 * DIM);
    values[DIM + 7] = Number.NaN;
    const bad = await upload(
      writeSafetensors({ e: { dtype: 'F32', shape: [4, DIM], data: values } }),
    );
    const good = await upload(embedsBlob(2, 6));
    const cacheBefore = worker.stats().embeds.cacheBytes;
    const enqueued = await trainer.enqueueRollouts({
      model: card.id,
      prompt: 'p',
      seeds: [1],
      promptEmbeds: bad,
      negativePromptEmbeds: good,
    });
    const [code] = await codeOf(trainer.waitFor(enqueued.id, { timeoutMs: 30_000 }));
    expect(code).toBe('CLIENT_JOB_FAILED');
    const status = await trainer.status(enqueued.id);
    expect(status.status).toBe('failed');
    // One attempt: no retry can make a NaN finite.
    expect(status.attempts).toBe(1);
    expect(status.error).toMatchObject({ code: 'WORKER_EMBEDS_INVALID' });
    expect(status.error?.details).toMatchObject({ sha256: bad.sha256, rule: 'finite', row: 1 });
    // No result, and the refused embedding is not cached (the good one it never reached isn't).
    const [resultCode] = await codeOf(trainer.getResult(enqueued.id));
    expect(resultCode).not.toBe('no error');
    expect(worker.stats().embeds.cacheBytes).toBe(cacheBefore);
  });

  it('reports the cache bytes of each live worker in /metrics', async () => {
    const deadline = Date.now() + 20_000;
    let line: string | undefined;
    while (Date.now() < deadline) {
      const text = await (
        await fetch(`${fleet.url}/metrics`, {
          headers: { authorization: `Bearer ${TOKENS.viewer}` },
        })
      ).text();
      line = text.split('\n').find((l) => l.startsWith('flowfleet_worker_embeds_cache_bytes{'));
      if (line !== undefined && Number(line.split(' ').at(-1)) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(line).toContain(`worker="${worker.workerId}"`);
    expect(Number(line!.split(' ').at(-1))).toBe(worker.stats().embeds.cacheBytes);
  });
});
