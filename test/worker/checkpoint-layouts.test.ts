// The two published layouts of a Wan2.1 DiT checkpoint — diffusers' (a `transformer/` directory
// of bf16 shards, their index, WanTransformer3DModel names) and Wan's own (one f32
// diffusion_pytorch_model.safetensors, WanModel names) — written by the same writer a user runs
// (`npm run write-wan21-checkpoint`), at wan21-mini's size, pushed to a real fleet as a user's
// checkpoint would be, and loaded by a worker to identical weights: its rollouts on the two
// versions agree bit for bit, and differ from those on a checkpoint of other weights.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { WAN21_MINI, writeWan21DitCheckpoint } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { TOKENS, startTestFleet } from './fleet-fixture.js';
import { acksOf, rolloutOn } from './sync-helpers.js';

let server: RedisServer;
let dir: string;
beforeAll(async () => {
  server = await startRedisServer();
  dir = await mkdtemp(join(tmpdir(), 'flowfleet-layouts-'));
});
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('Wan2.1 DiT checkpoints in both published layouts', () => {
  it('a worker loads the diffusers and the Wan layout of the same weights identically', async () => {
    const diffusers = await writeWan21DitCheckpoint({
      config: WAN21_MINI,
      layout: 'diffusers',
      dir: join(dir, 'diffusers'),
      seed: 5,
      maxShardBytes: 512 * 1024,
    });
    const wan = await writeWan21DitCheckpoint({
      config: WAN21_MINI,
      layout: 'wan',
      dir: join(dir, 'wan'),
      seed: 5,
    });
    const other = await writeWan21DitCheckpoint({
      config: WAN21_MINI,
      layout: 'wan',
      dir: join(dir, 'other'),
      seed: 6,
    });
    expect(diffusers.files.length).toBeGreaterThan(1);
    const fleet = await startTestFleet(server.url, 'ckpt-layouts');
    const client = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
    try {
      const worker = await fleet.startWorker();
      // Versions only increase: each rollout runs right after its version is loaded.
      const rollouts: Buffer[] = [];
      for (const [i, path] of [diffusers.path, wan.path, other.path].entries()) {
        const { sync } = await client.pushCheckpoint('dit', path);
        expect(sync.version).toBe(i + 1);
        expect((await acksOf(fleet, [worker], 'dit', i + 1))[worker.workerId]?.status).toBe('ok');
        rollouts.push(await rolloutOn(fleet, i + 1));
      }
      const [fromDiffusers, fromWan, fromOther] = rollouts as [Buffer, Buffer, Buffer];
      expect(fromDiffusers.equals(fromWan)).toBe(true);
      expect(fromDiffusers.equals(fromOther)).toBe(false);
    } finally {
      await client.close();
      await fleet.close();
    }
  });
});
