// `flowfleet sync dit ./checkpoint-dir` and the TypeScript SDK's pushCheckpoint against a real
// fleet: a sharded directory (index + shards, diffusers names) becomes one version, a PEFT
// adapter directory a LoRA version (its adapter_config.json read from beside it), and a directory
// that is no checkpoint is refused before anything is uploaded.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { initWeights, wan21MiniCard, WAN21_MINI } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/cli-harness.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { TOKENS, startTestFleet } from './fleet-fixture.js';
import { acksOf, bf16Pair, fileOf } from './sync-helpers.js';

let server: RedisServer;
let dir: string;
beforeAll(async () => {
  server = await startRedisServer();
  dir = await mkdtemp(join(tmpdir(), 'flowfleet-push-'));
});
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const diffusers = wan21MiniCard.components
  .find((c) => c.id === 'dit')!
  .checkpointKeys!.vocabularies.find((v) => v.name === 'diffusers')!;

/** A diffusers-style sharded checkpoint directory of wan21-mini DiT weights. */
async function shardedDir(name: string): Promise<string> {
  const path = join(dir, name);
  await mkdir(path);
  const { bf16 } = bf16Pair(initWeights(WAN21_MINI, 8, 'dit'));
  const names = [...bf16.keys()];
  const weightMap: Record<string, string> = {};
  for (const i of [1, 2]) {
    const file = `diffusion_pytorch_model-0000${i}-of-00002.safetensors`;
    const part = new Map(names.filter((_, j) => j % 2 === i - 1).map((n) => [n, bf16.get(n)!]));
    for (const n of part.keys()) weightMap[diffusers.keyOf(n)] = file;
    await writeFile(
      join(path, file),
      fileOf(part, (n) => diffusers.keyOf(n)),
    );
  }
  await writeFile(
    join(path, 'diffusion_pytorch_model.safetensors.index.json'),
    JSON.stringify({ metadata: {}, weight_map: weightMap }),
  );
  return path;
}

describe('pushing checkpoints from disk', () => {
  it('syncs a sharded directory with the CLI and a PEFT adapter directory with the SDK', async () => {
    const fleet = await startTestFleet(server.url, 'ckpt-push');
    const client = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
    try {
      const worker = await fleet.startWorker();
      const env = { FLOWFLEET_URL: fleet.url, FLOWFLEET_TOKEN: TOKENS.trainer };
      const run = await runInProcess(['sync', 'dit', await shardedDir('sharded'), '--json'], env);
      expect(run.code, run.err).toBe(0);
      const printed = JSON.parse(run.out) as { blobs: unknown[]; sync: { version: number } };
      expect(printed.blobs).toHaveLength(2);
      expect(printed.sync.version).toBe(1);
      expect((await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]?.status).toBe('ok');

      const adapterDir = new URL('../fixtures/peft-wan21-mini/', import.meta.url).pathname;
      const pushed = await client.pushCheckpoint('dit', adapterDir, {
        lora: { base: 1, expectLayers: 16 },
      });
      expect(pushed.sync.version).toBe(2);
      const progress = await client.waitForSync('dit', 2, { all: true }, { timeoutMs: 20_000 });
      expect(progress.okWorkers).toEqual([worker.workerId]);
      const report = await client.weights('dit');
      expect(report.versions['2']).toMatchObject({ kind: 'lora', base: 1 });
      expect(report.versions['2']?.boundLayers).toEqual({ [worker.workerId]: 16 });

      // Two files and no index: refused before any upload, nothing recorded.
      const ambiguous = join(dir, 'ambiguous');
      await mkdir(ambiguous);
      for (const f of ['a.safetensors', 'b.safetensors']) {
        await writeFile(join(ambiguous, f), fileOf(new Map()));
      }
      const refused = await runInProcess(['sync', 'dit', ambiguous, '--json'], env);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.out)).toMatchObject({
        error: { code: 'CLI_FILE_UNREADABLE', details: { reason: 'several-files' } },
      });
      expect(await fleet.redis.hget(coordinatorKeys(fleet.prefix).weights('dit'), 'current')).toBe(
        '2',
      );
    } finally {
      await client.close();
      await fleet.close();
    }
  });
});
