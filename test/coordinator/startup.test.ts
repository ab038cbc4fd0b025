import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCoordinator } from '@flowfleet/coordinator';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  startRedisServer,
  uniquePrefix,
  type RedisServer,
} from '../harness/redis-server.js';
import { TOKENS, waitFor } from './fixture.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const MAIN = join(ROOT, 'apps/coordinator/src/main.ts');

let lru: RedisServer;
let good: RedisServer;
let blobDir: string;

beforeAll(async () => {
  [lru, good] = await Promise.all([
    startRedisServer({ maxmemoryPolicy: 'allkeys-lru' }),
    startRedisServer(),
  ]);
  blobDir = await mkdtemp(join(tmpdir(), 'flowfleet-startup-'));
});

afterAll(async () => {
  await Promise.all([lru?.stop(), good?.stop()]);
  if (blobDir !== undefined) await rm(blobDir, { recursive: true, force: true });
});

function coordinatorOn(redisUrl: string) {
  return createCoordinator({ redisUrl, prefix: uniquePrefix('startup'), tokens: TOKENS, blobDir });
}

/** Runs main.ts with `env`; resolves with its exit code and output once it exits. */
function runMain(env: Record<string, string>, onStarted?: (pid: number) => Promise<void>) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@flowfleet/source', MAIN],
    {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, output })),
  );
  if (onStarted !== undefined && child.pid !== undefined) void onStarted(child.pid);
  return { child, exited, output: () => output };
}

describe('coordinator start-up', () => {
  it('refuses a Redis whose maxmemory-policy is not noeviction, naming the policy and the fix', async () => {
    const coordinator = coordinatorOn(lru.url);
    const error = await coordinator.start(0).catch((e: unknown) => e);
    await coordinator.close();
    expect(isFlowfleetError(error, 'COORD_REDIS_EVICTION_POLICY')).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('allkeys-lru');
    expect(message).toContain('CONFIG SET maxmemory-policy noeviction');
    expect(message).toContain('redis.conf');
  });

  it('answers COORD_REDIS_UNAVAILABLE when Redis cannot be reached', async () => {
    const coordinator = coordinatorOn(`redis://127.0.0.1:${await freePort()}`);
    const error = await coordinator.start(0).catch((e: unknown) => e);
    await coordinator.close();
    expect(isFlowfleetError(error, 'COORD_REDIS_UNAVAILABLE')).toBe(true);
  });

  it('closes idempotently, before and after start, and refuses to restart', async () => {
    const never = coordinatorOn(good.url);
    await Promise.all([never.close(), never.close()]);
    const coordinator = coordinatorOn(good.url);
    const url = await coordinator.start(0);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const first = coordinator.close();
    expect(coordinator.close()).toBe(first);
    await first;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    expect(coordinator.services.redis.status).toBe('end');
    await expect(coordinator.start(0)).rejects.toThrow(/after close/);
  });
});

describe('main.ts', () => {
  it('exits 2 on a bad environment (naming each variable) and 1 on an evicting Redis', async () => {
    // Both processes run at once: each start-up pays tsx's compile time.
    const [badEnv, evicting] = await Promise.all([
      runMain({ FLOWFLEET_PORT: 'not-a-port' }).exited,
      runMain({ REDIS_URL: lru.url, FLOWFLEET_AUTH: 'off', FLOWFLEET_PORT: '0' }).exited,
    ]);
    expect(badEnv.code).toBe(2);
    for (const variable of ['REDIS_URL', 'FLOWFLEET_PORT', 'FLOWFLEET_TRAINER_TOKEN']) {
      expect(badEnv.output).toContain(variable);
    }
    expect(evicting.code).toBe(1);
    expect(evicting.output).toContain('COORD_REDIS_EVICTION_POLICY');
    expect(evicting.output).toContain('allkeys-lru');
  });

  it('serves, then shuts down cleanly on SIGTERM without logging tokens', async () => {
    const port = await freePort();
    const run = runMain({
      REDIS_URL: good.url,
      FLOWFLEET_PORT: String(port),
      FLOWFLEET_PREFIX: uniquePrefix('main'),
      FLOWFLEET_BLOB_DIR: blobDir,
      FLOWFLEET_TRAINER_TOKEN: TOKENS.trainer,
      FLOWFLEET_VIEWER_TOKEN: TOKENS.viewer,
      FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
      FLOWFLEET_LOG_LEVEL: 'debug',
    });
    try {
      await waitFor(
        async () => run.output().includes('coordinator listening'),
        'the coordinator to listen',
        20_000,
      );
      const fleet = await fetch(`http://127.0.0.1:${port}/v1/fleet`, {
        headers: { authorization: `Bearer ${TOKENS.viewer}` },
      });
      expect(fleet.status).toBe(200);
      run.child.kill('SIGTERM');
      const { code, output } = await run.exited;
      expect(code).toBe(0);
      expect(output).toContain('coordinator closed');
      for (const token of Object.values(TOKENS)) expect(output).not.toContain(token);
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
