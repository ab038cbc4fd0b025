import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { defaultWorkerId, parseWorkerEnv, workerOptionsFromEnv } from './env.js';
import { DEFAULT_LOCK_SETTINGS } from './worker-options.js';

const BASE = { REDIS_URL: 'redis://127.0.0.1:6379', FLOWFLEET_COORDINATOR_URL: 'http://c:8080' };

function issuesOf(env: NodeJS.ProcessEnv): string[] {
  try {
    parseWorkerEnv(env);
  } catch (error) {
    if (!isFlowfleetError(error, 'WORKER_ENV_INVALID')) throw error;
    return (error.details as { issues: { variable: string }[] }).issues.map((i) => i.variable);
  }
  return [];
}

describe('parseWorkerEnv', () => {
  it('fills every default and maps onto the worker options', () => {
    const env = parseWorkerEnv({ ...BASE, FLOWFLEET_CONCURRENCY: '3' });
    expect(env).toMatchObject({
      FLOWFLEET_CONCURRENCY: 3,
      FLOWFLEET_PREFIX: 'ff',
      FLOWFLEET_BACKEND: 'auto',
      FLOWFLEET_HEARTBEAT_TTL_MS: 15_000,
      FLOWFLEET_LOCK_MS: DEFAULT_LOCK_SETTINGS.lockDurationMs,
      FLOWFLEET_STALLED_INTERVAL_MS: DEFAULT_LOCK_SETTINGS.stalledIntervalMs,
      FLOWFLEET_MAX_STALLED_COUNT: 3,
    });
    const options = workerOptionsFromEnv(env);
    expect(options.workerId).toBe(defaultWorkerId());
    expect(options.ortThreads).toBe(3); // one pool thread per concurrent rollout by default
    expect(options.extraKernels).toEqual([]);
    expect(options).not.toHaveProperty('workerToken');
  });

  it('binds the peer server to loopback when the coordinator is on loopback, else every interface', () => {
    const peerOf = (env: NodeJS.ProcessEnv) => workerOptionsFromEnv(parseWorkerEnv(env)).peer;
    // `flowfleet up`: everything on 127.0.0.1, the peer server too.
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080']) {
      expect(peerOf({ ...BASE, FLOWFLEET_COORDINATOR_URL: url })).toMatchObject({
        host: '127.0.0.1',
      });
    }
    expect(peerOf(BASE)).toMatchObject({ host: '0.0.0.0' });
    expect(peerOf({ ...BASE, FLOWFLEET_PEER_HOST: '10.0.0.7' })).toMatchObject({
      host: '10.0.0.7',
    });
    expect(peerOf({ ...BASE, FLOWFLEET_PEER_PORT: 'off' })).toBe(false);
  });

  it('reads FLOWFLEET_REDIS_MODE: standalone by default, cluster or sentinel, nothing else', () => {
    expect(workerOptionsFromEnv(parseWorkerEnv(BASE))).toMatchObject({
      redisMode: 'standalone',
      redisReplication: { replicas: 0, timeoutMs: 1_000 },
    });
    expect(
      workerOptionsFromEnv(parseWorkerEnv({ ...BASE, FLOWFLEET_REDIS_MODE: 'cluster' })).redisMode,
    ).toBe('cluster');
    expect(issuesOf({ ...BASE, FLOWFLEET_REDIS_MODE: 'replicated' })).toEqual([
      'FLOWFLEET_REDIS_MODE',
    ]);
    const sentinel = {
      ...BASE,
      REDIS_URL: 'redis://:pw@s1,s2:26380/ff?sentinelPassword=spw',
      FLOWFLEET_REDIS_MODE: 'sentinel',
      FLOWFLEET_REDIS_WAIT_REPLICAS: '1',
      FLOWFLEET_REDIS_WAIT_TIMEOUT_MS: '250',
    };
    expect(workerOptionsFromEnv(parseWorkerEnv(sentinel))).toMatchObject({
      redisMode: 'sentinel',
      redisReplication: { replicas: 1, timeoutMs: 250 },
    });
    expect(issuesOf({ ...sentinel, REDIS_URL: 'redis://s1:26379' })).toEqual(['REDIS_URL']);
  });

  it('reads FLOWFLEET_DEVICE: auto by default, cpu, cuda or webgpu, nothing else', () => {
    expect(workerOptionsFromEnv(parseWorkerEnv(BASE)).device).toBe('auto');
    for (const device of ['cpu', 'cuda', 'webgpu'] as const) {
      expect(
        workerOptionsFromEnv(parseWorkerEnv({ ...BASE, FLOWFLEET_DEVICE: device })).device,
      ).toBe(device);
    }
    expect(issuesOf({ ...BASE, FLOWFLEET_DEVICE: 'gpu' })).toEqual(['FLOWFLEET_DEVICE']);
  });

  it('lists every bad variable at once and treats empty strings as unset', () => {
    expect(
      issuesOf({
        REDIS_URL: 'http://nope',
        FLOWFLEET_COORDINATOR_URL: '',
        FLOWFLEET_CONCURRENCY: '0',
        FLOWFLEET_BACKEND: 'gpu',
        FLOWFLEET_EXTRA_KERNELS: 'Bad Op',
      }).sort(),
    ).toEqual([
      'FLOWFLEET_BACKEND',
      'FLOWFLEET_CONCURRENCY',
      'FLOWFLEET_COORDINATOR_URL',
      'FLOWFLEET_EXTRA_KERNELS',
      'REDIS_URL',
    ]);
  });

  it('reads FLOWFLEET_MODELS: the card ids to load, each one a shipped card', () => {
    expect(workerOptionsFromEnv(parseWorkerEnv(BASE))).not.toHaveProperty('models');
    const env = { ...BASE, FLOWFLEET_MODELS: 'wan21-mini, wan2.1-t2v-1.3b' };
    expect(workerOptionsFromEnv(parseWorkerEnv(env)).models).toEqual([
      'wan21-mini',
      'wan2.1-t2v-1.3b',
    ]);
    for (const bad of ['wan21-mini,nope', ',', 'wan21-mini,']) {
      expect(issuesOf({ ...BASE, FLOWFLEET_MODELS: bad })).toEqual(['FLOWFLEET_MODELS']);
    }
    expect(() => parseWorkerEnv({ ...BASE, FLOWFLEET_MODELS: 'nope' })).toThrow(
      "FLOWFLEET_MODELS: unknown model card 'nope' (known: wan21-mini",
    );
  });

  it('takes test-only extra kernels and short lock settings', () => {
    const options = workerOptionsFromEnv(
      parseWorkerEnv({
        ...BASE,
        FLOWFLEET_EXTRA_KERNELS: 'x_probe, flow_sde_step:fast',
        FLOWFLEET_LOCK_MS: '2000',
        FLOWFLEET_STALLED_INTERVAL_MS: '1000',
        FLOWFLEET_WORKER_TOKEN: 'worker-token-0123456789',
      }),
    );
    expect(options.extraKernels).toEqual([
      { op: 'x_probe', variant: 'default' },
      { op: 'flow_sde_step', variant: 'fast' },
    ]);
    expect(options.locks).toEqual({
      lockDurationMs: 2000,
      stalledIntervalMs: 1000,
      maxStalledCount: 3,
    });
    expect(options.workerToken).toBe('worker-token-0123456789');
  });

  it('derives a key-safe default worker id from host and pid', () => {
    expect(defaultWorkerId('gpu box:1', 42)).toBe('gpu-box-1-42');
  });
});
