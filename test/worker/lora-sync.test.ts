// LoRA adapters as syncs: a real PEFT adapter (test/fixtures/peft-wan21-mini, rank 2, rsLoRA,
// BF16) merged by the workers into their base runs bit for bit like a full sync of the merged
// tensors computed with the same merge; an adapter on a base the worker no longer holds is
// rebuilt first; an adapter that binds no layer, or fewer than expectLayers, is refused and
// nothing changes — at the edge, and on a worker when the edge could not tell.
import { readFile } from 'node:fs/promises';
import { bfloat16ToFloat32, readSafetensors, type SafetensorsTensor } from '@flowfleet/formats';
import { coordinatorKeys } from '@flowfleet/coordinator';
import {
  bindLoraAdapter,
  createCardRegistry,
  loraScale,
  mergeLoraWeight,
  type PeftLoraConfig,
} from '@flowfleet/models';
import { initWeights, wan21MiniCard, WAN21_MINI } from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPixelFlowCard } from '../cards/pixel-flow-card.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet } from './fleet-fixture.js';
import { acksOf, fileOf, postSync, rolloutOn, syncOk, upload } from './sync-helpers.js';

const FIXTURE = new URL('../fixtures/peft-wan21-mini/', import.meta.url);

let server: RedisServer;
let adapterFile: Uint8Array;
let config: PeftLoraConfig & Record<string, unknown>;
beforeAll(async () => {
  server = await startRedisServer();
  adapterFile = await readFile(new URL('adapter_model.safetensors', FIXTURE));
  config = JSON.parse(
    await readFile(new URL('adapter_config.json', FIXTURE), 'utf8'),
  ) as typeof config;
});
afterAll(async () => {
  await server?.stop();
});

const dit = wan21MiniCard.components.find((c) => c.id === 'dit')!;

function f32(tensors: ReadonlyMap<string, TensorData>): Map<string, SafetensorsTensor> {
  return new Map(
    [...tensors].map(([name, t]) => [
      name,
      { dtype: 'F32', shape: t.dims, data: t.data as Float32Array },
    ]),
  );
}

/** What a trainer computes to sync the merged model in full: the same merge, per layer. */
function mergedByTrainer(base: ReadonlyMap<string, TensorData>): Map<string, TensorData> {
  const adapter = readSafetensors(adapterFile, { copy: true }).tensors;
  const entries = new Map(
    [...adapter].map(([key, t]) => [key, { dtype: t.dtype, shape: t.shape }]),
  );
  const binding = bindLoraAdapter(dit, entries, config);
  const widen = (key: string) => bfloat16ToFloat32(adapter.get(key)!.data as Uint16Array);
  const merged = new Map(base);
  for (const layer of binding.layers) {
    const data = mergeLoraWeight({
      weight: base.get(layer.target)!.data as Float32Array,
      down: widen(layer.down),
      up: widen(layer.up),
      outFeatures: layer.outFeatures,
      inFeatures: layer.inFeatures,
      rank: layer.rank,
      scale: loraScale(layer.alpha, layer.rank, config.use_rslora),
    });
    merged.set(layer.target, {
      dtype: 'float32',
      dims: [layer.outFeatures, layer.inFeatures],
      data,
    });
  }
  return merged;
}

describe('LoRA syncs', () => {
  it('merges a PEFT adapter into its base bit for bit like a full sync of the merged tensors', async () => {
    const fleet = await startTestFleet(server.url, 'lora-sync');
    try {
      const workers = [await fleet.startWorker(), await fleet.startWorker()];
      const base = initWeights(WAN21_MINI, 3, 'dit');
      await fleet.syncWeights('dit', 1, fileOf(f32(base)));
      await acksOf(fleet, workers, 'dit', 1);
      const onBase = await rolloutOn(fleet, 1);

      const adapter = await upload(fleet, adapterFile);
      await syncOk(fleet, 'dit', {
        version: 2,
        sha256: adapter,
        lora: { base: 1, config, expectLayers: 16 },
      });
      const acks = await acksOf(fleet, workers, 'dit', 2);
      for (const worker of workers) {
        expect(acks[worker.workerId]).toMatchObject({
          status: 'ok',
          boundLayers: 16,
          reusedTensors: dit.parameterShapes().size - 16,
          // Only the adapter: 16 layers × (A [2, 128] + B [128, 2]) in BF16.
          fetchedBytes: 16 * 2 * (2 * 128) * 2,
        });
        expect(worker.modelInstance().currentVersion('dit')).toBe(2);
      }
      const report = (await (await fleet.api('/v1/weights/dit')).json()) as {
        versions: Record<
          string,
          { kind: string; base: number | null; boundLayers: Record<string, number> }
        >;
      };
      expect(report.versions['2']).toMatchObject({
        kind: 'lora',
        base: 1,
        boundLayers: Object.fromEntries(workers.map((w) => [w.workerId, 16])),
      });
      const onAdapter = await rolloutOn(fleet, 2);
      expect(onAdapter.equals(onBase)).toBe(false);

      // The trainer's full sync of the same merge: the same rollout, bit for bit.
      await fleet.syncWeights('dit', 3, fileOf(f32(mergedByTrainer(base))));
      await acksOf(fleet, workers, 'dit', 3);
      expect((await rolloutOn(fleet, 3)).equals(onAdapter)).toBe(true);

      // The adapter on v1 again while the workers hold v3: v1 is rebuilt (only the 16 merged
      // tensors differ from v3, so only those are fetched), then merged.
      await syncOk(fleet, 'dit', { version: 4, sha256: adapter, lora: { base: 1, config } });
      const again = await acksOf(fleet, workers, 'dit', 4);
      const layerBytes = 16 * 128 * 128 * 4;
      for (const worker of workers) {
        expect(again[worker.workerId]).toMatchObject({ status: 'ok', boundLayers: 16 });
        expect(again[worker.workerId]?.fetchedBytes).toBe(layerBytes + 16 * 2 * 2 * 128 * 2);
      }
      expect((await rolloutOn(fleet, 4)).equals(onAdapter)).toBe(true);
    } finally {
      await fleet.close();
    }
  });

  it('refuses an adapter that binds no layer or fewer than expectLayers, and nothing changes', async () => {
    const fleet = await startTestFleet(server.url, 'lora-unbound');
    try {
      const worker = await fleet.startWorker();
      await fleet.syncWeights('dit', 1, fileOf(f32(initWeights(WAN21_MINI, 3, 'dit'))));
      await acksOf(fleet, [worker], 'dit', 1);
      const adapter = readSafetensors(adapterFile, { copy: true }).tensors;
      const foreign = await upload(
        fleet,
        fileOf(adapter, (key) => key.replace('base_model.model.blocks', 'unet.down_blocks')),
      );
      const keys = coordinatorKeys(fleet.prefix);
      const none = await postSync(fleet, 'dit', {
        version: 2,
        sha256: foreign,
        lora: { base: 1, config },
      });
      expect(none.status).toBe(422);
      expect(none.json).toMatchObject({ code: 'MODEL_LORA_UNBOUND', details: { boundLayers: 0 } });
      const few = await postSync(fleet, 'dit', {
        version: 2,
        sha256: await upload(fleet, adapterFile),
        lora: { base: 1, config, expectLayers: 240 },
      });
      expect(few.status).toBe(422);
      expect(few.json).toMatchObject({
        code: 'MODEL_LORA_UNBOUND',
        details: { boundLayers: 16, expectLayers: 240 },
      });
      expect(await fleet.redis.hget(keys.weights('dit'), 'latest')).toBe('1');
      expect(await fleet.redis.hexists(keys.weights('dit'), 'v:2')).toBe(0);
      expect(worker.stats().weights.dit).toBe(1);
    } finally {
      await fleet.close();
    }
  });

  it('answers a rank that does not match the tensors 400 MODEL_LORA_INVALID, as the coordinator README says', async () => {
    const fleet = await startTestFleet(server.url, 'lora-rank');
    try {
      await fleet.syncWeights('dit', 1, fileOf(f32(initWeights(WAN21_MINI, 3, 'dit'))));
      const sha256 = await upload(fleet, adapterFile);
      // The fixture's tensors are rank 2; a config saying 4 (and a rank_pattern saying 3) lies.
      for (const wrong of [{ r: 4 }, { rank_pattern: { q: 3 } }]) {
        const refused = await postSync(fleet, 'dit', {
          version: 2,
          sha256,
          lora: { base: 1, config: { ...config, ...wrong } },
        });
        expect(refused.status, JSON.stringify(refused.json)).toBe(400);
        expect(refused.json).toMatchObject({ code: 'MODEL_LORA_INVALID' });
      }
      const keys = coordinatorKeys(fleet.prefix);
      expect(await fleet.redis.hget(keys.weights('dit'), 'latest')).toBe('1');
    } finally {
      await fleet.close();
    }
  });

  it('is refused by the worker, which stays on its base, when the edge cannot bind it', async () => {
    // A coordinator whose cards lack the dit cannot check the binding; the worker's card can.
    const fleet = await startTestFleet(server.url, 'lora-worker-refuses', {
      cards: createCardRegistry([createPixelFlowCard()]),
    });
    try {
      const worker = await fleet.startWorker();
      await fleet.syncWeights('dit', 1, fileOf(f32(initWeights(WAN21_MINI, 3, 'dit'))));
      await acksOf(fleet, [worker], 'dit', 1);
      const unknownBase = await postSync(fleet, 'dit', {
        version: 5,
        sha256: await upload(fleet, adapterFile),
        lora: { base: 4, config },
      });
      expect(unknownBase).toMatchObject({ status: 409, json: { code: 'API_SYNC_BASE_UNKNOWN' } });
      await syncOk(fleet, 'dit', {
        version: 2,
        sha256: await upload(fleet, adapterFile),
        lora: { base: 1, config, expectLayers: 17 },
      });
      const ack = (await acksOf(fleet, [worker], 'dit', 2))[worker.workerId]!;
      expect(ack).toMatchObject({ status: 'refused', code: 'MODEL_LORA_UNBOUND' });
      expect(ack.reason).toMatch(/binds 16 layers, fewer than the 17 expected/);
      expect(worker.stats().weights.dit).toBe(1);
    } finally {
      await fleet.close();
    }
  });
});
