// `flowfleet up` as a child process: the fleet comes up (its pids alive), the remote commands'
// --json output parses against it, SIGINT stops workers, coordinator and redis (no orphans, temp
// dirs gone, exit 0); and without any Redis the error says how to install one.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient, uploadPromptEmbeds } from '@flowfleet/client';
import { saveWeightsFile } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isAlive,
  isRunning,
  runInProcess,
  spawnCli,
  waitFor,
  type CliChild,
} from './cli-harness.js';

interface Ready {
  event: 'ready';
  url: string;
  tokens: { trainer: string; viewer: string; worker: string };
  blobDir: string;
  redis: { kind: string; url: string; pid: number };
  coordinator: { pid: number };
  workers: { id: string; pid: number }[];
  reaper: { pid: number };
}

const START_MS = 90_000;

/** The local addresses (`a.b.c.d`) that listen on TCP `port`, read from /proc/net/tcp{,6}. */
async function listeningAddresses(port: number): Promise<string[]> {
  const addresses: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const table = await readFile(file, 'utf8').catch(() => '');
    for (const row of table.split('\n').slice(1)) {
      const [, local, , state] = row.trim().split(/\s+/);
      if (local === undefined || state !== '0A') continue; // 0A: LISTEN
      const [hexAddress = '', hexPort = ''] = local.split(':');
      if (Number.parseInt(hexPort, 16) !== port) continue;
      addresses.push(
        hexAddress.length === 8
          ? (hexAddress.match(/../g) ?? [])
              .map((b) => Number.parseInt(b, 16))
              .reverse()
              .join('.')
          : `[${hexAddress}]`,
      );
    }
  }
  return addresses;
}

/** The environment of a shell without REDIS_URL (the fleet must start its own Redis). */
function envWithoutRedis(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env['REDIS_URL'];
  return env;
}

describe('flowfleet up', () => {
  let up: CliChild;
  let ready: Ready;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowfleet-cli-test-'));
    up = spawnCli(['up', '--json', '--workers', '2'], { env: envWithoutRedis() });
    ready = JSON.parse(
      await up.waitForLine((l) => l.includes('"event":"ready"'), START_MS),
    ) as Ready;
  }, START_MS + 10_000);

  afterAll(async () => {
    if (up !== undefined && up.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('starts redis-server, the coordinator and 2 workers as live child processes', () => {
    expect(ready.redis.kind).toBe('redis-server');
    expect(ready.workers.map((w) => w.id)).toEqual(['w1', 'w2']);
    const pids = [ready.redis.pid, ready.coordinator.pid, ...ready.workers.map((w) => w.pid)];
    expect(pids.filter(isAlive)).toEqual(pids);
    expect(new Set(Object.values(ready.tokens)).size).toBe(3);
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers every remote command with JSON only under --json', { timeout: 60_000 }, async () => {
    const env = { FLOWFLEET_URL: ready.url, FLOWFLEET_TOKEN: ready.tokens.trainer };
    const json = async (argv: string[]): Promise<unknown[]> => {
      const run = await runInProcess([...argv, '--json'], env);
      expect(run.code, `${argv.join(' ')}: ${run.out}${run.err}`).toBe(0);
      return run.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown);
    };

    const [fleet] = (await json(['workers'])) as [
      { live: number; workers: { workerId: string; peerUrl?: string }[] },
    ];
    expect(fleet.live).toBe(2);
    // Each worker's peer server is in the fleet view, and like everything `up` starts it listens
    // on 127.0.0.1 only (the coordinator is on loopback).
    const ports = [new URL(ready.url).port, new URL(ready.redis.url).port];
    for (const worker of fleet.workers) {
      expect(worker.peerUrl, worker.workerId).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      ports.push(new URL(worker.peerUrl!).port);
    }
    for (const port of ports)
      expect(await listeningAddresses(Number(port)), `port ${port}`).toEqual(['127.0.0.1']);

    const [rollout] = (await json([
      'rollout',
      '--seeds',
      '1-2',
      '--steps',
      '2',
      '--frames',
      '1',
      '--height',
      '8',
      '--width',
      '8',
    ])) as [
      {
        enqueued: { id: string; lane: string };
        status: { status: string; summary: { logProbs: number[][] } };
      },
    ];
    expect(rollout.status.status).toBe('completed');
    expect(rollout.status.summary.logProbs).toHaveLength(2);

    // --prompt-embeds / --negative-prompt-embeds name uploaded embeddings: the edge checks each
    // (a 16-wide blob is not the 1.3B card's 4096) and then finds no worker loading that card.
    const uploader = FlowfleetClient.create({ baseUrl: ready.url, token: ready.tokens.trainer });
    const [good, narrow] = await uploadPromptEmbeds(uploader, [
      { tokens: 3, dim: 4096, data: new Float32Array(3 * 4096).fill(0.5) },
      { tokens: 3, dim: 16, data: new Float32Array(3 * 16).fill(0.5) },
    ]);
    const embedsRollout = (negative: string): Promise<{ code: number; out: string }> =>
      runInProcess(
        [
          ...['rollout', '--model', 'wan2.1-t2v-1.3b', '--json'],
          ...['--prompt-embeds', good!.sha256, '--negative-prompt-embeds', negative],
        ],
        env,
      );
    const refused = JSON.parse((await embedsRollout(narrow!.sha256)).out) as {
      error: { code: string; details: { field?: string; error?: { field?: string } } };
    };
    expect(refused.error.code).toBe('API_EMBEDS_INVALID');
    expect(JSON.stringify(refused.error.details)).toContain('"field":"negativePromptEmbeds"');
    const noWorker = await embedsRollout(good!.sha256.toUpperCase());
    expect(noWorker.code).toBe(1);
    expect(JSON.parse(noWorker.out)).toMatchObject({ error: { code: 'API_NO_CAPACITY' } });

    const weights = join(dir, 'dit.safetensors');
    await saveWeightsFile(weights, initWeights(wan21MiniCard.config, 5, 'dit'));
    const [sync] = (await json(['sync', 'dit', weights])) as [
      { sync: { version: number }; progress: { okWorkers: string[] } },
    ];
    expect(sync.sync.version).toBe(1);
    expect([...sync.progress.okWorkers].sort()).toEqual(['w1', 'w2']);

    const [lanes] = (await json(['lanes'])) as [
      { lanes: { lane: string; eligibleWorkers: number; capacity: number }[] },
    ];
    expect(lanes.lanes.map((l) => [l.lane, l.eligibleWorkers])).toEqual([
      [rollout.enqueued.lane, 2],
    ]);

    const [matrix] = (await json(['matrix'])) as [
      { liveWorkers: number; lanes: { lane: string; eligibleWorkers: number }[] },
    ];
    expect(matrix.liveWorkers).toBe(2);
    expect(matrix.lanes).toHaveLength(1);
    expect(matrix.lanes[0]?.eligibleWorkers).toBe(2);
    const [serving] = (await json(['workers', '--lane', matrix.lanes[0]!.lane])) as [
      { workers: { workerId: string }[] },
    ];
    expect(serving.workers.map((w) => w.workerId).sort()).toEqual(['w1', 'w2']);

    const refreshes = (await json(['watch', '--count', '2', '--interval', '100'])) as {
      fleet: { live: number };
      lanes: unknown[];
    }[];
    expect(refreshes.map((r) => r.fleet.live)).toEqual([2, 2]);

    // The viewer token reads but may not mutate: a coded error as JSON, exit 1.
    const forbidden = await runInProcess(['sync', 'dit', weights, '--json'], {
      ...env,
      FLOWFLEET_TOKEN: ready.tokens.viewer,
    });
    expect(forbidden.code).toBe(1);
    expect(JSON.parse(forbidden.out)).toMatchObject({ error: { code: 'API_FORBIDDEN' } });
  });

  it('stops workers, coordinator and redis on SIGINT and exits 0 without orphans', async () => {
    const pids = [
      ready.redis.pid,
      ready.coordinator.pid,
      ...ready.workers.map((w) => w.pid),
      ready.reaper.pid,
    ];
    up.child.kill('SIGINT');
    expect(await up.exited).toBe(0);
    expect(JSON.parse(up.stdout.filter((l) => l.trim() !== '').at(-1) ?? '{}')).toEqual({
      event: 'stopped',
      exitCode: 0,
    });
    await waitFor(
      () => pids.every((pid) => !isRunning(pid)),
      'the fleet processes to be gone',
      5_000,
    );
    expect(existsSync(ready.blobDir)).toBe(false);
    // Children stop in order: the workers have closed before the coordinator shut down.
    const log = up.stderr.join('\n');
    const workerClosed = Math.max(
      ...['[w1]', '[w2]'].map((p) => log.indexOf(`${p.padEnd(7)} info  worker closed`)),
    );
    const coordinatorStopping = log.indexOf('[coord] info  shutting down');
    expect(workerClosed).toBeGreaterThan(0);
    expect(coordinatorStopping).toBeGreaterThan(workerClosed);
  });
});

describe('flowfleet up without any Redis', () => {
  it('fails with CLI_REDIS_UNAVAILABLE and says how to install Redis', async () => {
    // No redis-server on PATH, no REDIS_URL, no container runtime: node itself runs by absolute path.
    const up = spawnCli(['up', '--json'], { env: envWithoutRedis({ PATH: '/nonexistent' }) });
    expect(await up.exited).toBe(1);
    const error = JSON.parse(up.stdout.join('\n')) as { error: { code: string; message: string } };
    expect(error.error.code).toBe('CLI_REDIS_UNAVAILABLE');
    expect(error.error.message).toMatch(/apt-get install redis-server/);
  });
});
