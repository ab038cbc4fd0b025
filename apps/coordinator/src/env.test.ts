import { isFlowfleetError } from '@flowfleet/errors';
import { DEFAULT_LIMITS } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { replicationFromEnv } from '@flowfleet/redis';
import { limitsFromEnv, parseCoordinatorEnv, tokensFromEnv } from './env.js';

const TOKENS = {
  FLOWFLEET_TRAINER_TOKEN: 'trainer-0123456789abcdef',
  FLOWFLEET_VIEWER_TOKEN: 'viewer-0123456789abcdef',
  FLOWFLEET_WORKER_TOKEN: 'worker-0123456789abcdef',
};

function issuesOf(env: NodeJS.ProcessEnv): string[] {
  try {
    parseCoordinatorEnv(env);
  } catch (error) {
    if (!isFlowfleetError(error, 'COORD_ENV_INVALID')) throw error;
    return (error.details['issues'] as { variable: string }[]).map((issue) => issue.variable);
  }
  return [];
}

describe('parseCoordinatorEnv', () => {
  it('takes FLOWFLEET_REDIS_MODE=cluster or sentinel and refuses another mode', () => {
    const base = { REDIS_URL: 'redis://127.0.0.1:7000', ...TOKENS };
    expect(
      parseCoordinatorEnv({ ...base, FLOWFLEET_REDIS_MODE: 'cluster' }).FLOWFLEET_REDIS_MODE,
    ).toBe('cluster');
    expect(issuesOf({ ...base, FLOWFLEET_REDIS_MODE: 'replicated' })).toEqual([
      'FLOWFLEET_REDIS_MODE',
    ]);
    const sentinel = parseCoordinatorEnv({
      ...TOKENS,
      REDIS_URL: 'redis://s1:26379,s2:26379/mymaster',
      FLOWFLEET_REDIS_MODE: 'sentinel',
      FLOWFLEET_REDIS_WAIT_REPLICAS: '1',
    });
    expect(replicationFromEnv(sentinel)).toEqual({ replicas: 1, timeoutMs: 1_000 });
    // A sentinel URL must name the master group; several hosts need sentinel mode.
    expect(issuesOf({ ...base, FLOWFLEET_REDIS_MODE: 'sentinel' })).toEqual(['REDIS_URL']);
    expect(issuesOf({ ...TOKENS, REDIS_URL: 'redis://s1:1,s2:2/m' })).toEqual(['REDIS_URL']);
    // WAIT needs one master connection.
    expect(
      issuesOf({ ...base, FLOWFLEET_REDIS_MODE: 'cluster', FLOWFLEET_REDIS_WAIT_REPLICAS: '1' }),
    ).toEqual(['FLOWFLEET_REDIS_WAIT_REPLICAS']);
  });

  it('applies the documented defaults', () => {
    const env = parseCoordinatorEnv({ REDIS_URL: 'redis://127.0.0.1:6380', ...TOKENS });
    expect(env).toMatchObject({
      FLOWFLEET_PORT: 8080,
      FLOWFLEET_HOST: '127.0.0.1',
      FLOWFLEET_BLOB_DIR: './.flowfleet/blobs',
      FLOWFLEET_PREFIX: 'ff',
      FLOWFLEET_REDIS_MODE: 'standalone',
      FLOWFLEET_REDIS_WAIT_REPLICAS: 0,
      FLOWFLEET_HEARTBEAT_TTL_MS: 15_000,
      FLOWFLEET_LOG_LEVEL: 'info',
      FLOWFLEET_AUTH: 'on',
    });
    expect(tokensFromEnv(env)).toEqual({
      trainer: TOKENS.FLOWFLEET_TRAINER_TOKEN,
      viewer: TOKENS.FLOWFLEET_VIEWER_TOKEN,
      worker: TOKENS.FLOWFLEET_WORKER_TOKEN,
    });
    expect(limitsFromEnv(env)).toEqual(DEFAULT_LIMITS);
  });

  it('reports every bad variable at once, tokens included', () => {
    expect(issuesOf({ FLOWFLEET_PORT: '70000', FLOWFLEET_PREFIX: 'a:b' }).sort()).toEqual(
      [
        'FLOWFLEET_PORT',
        'FLOWFLEET_PREFIX',
        'FLOWFLEET_TRAINER_TOKEN',
        'FLOWFLEET_VIEWER_TOKEN',
        'FLOWFLEET_WORKER_TOKEN',
        'REDIS_URL',
      ].sort(),
    );
    expect(issuesOf({ REDIS_URL: 'http://x', FLOWFLEET_AUTH: 'off' })).toEqual(['REDIS_URL']);
  });

  it('needs tokens unless auth is explicitly off, refuses short or equal tokens', () => {
    expect(
      tokensFromEnv(parseCoordinatorEnv({ REDIS_URL: 'redis://r:1', FLOWFLEET_AUTH: 'off' })),
    ).toBeNull();
    expect(
      issuesOf({ REDIS_URL: 'redis://r:1', ...TOKENS, FLOWFLEET_VIEWER_TOKEN: 'short' }),
    ).toEqual(['FLOWFLEET_VIEWER_TOKEN']);
    expect(
      issuesOf({
        REDIS_URL: 'redis://r:1',
        ...TOKENS,
        FLOWFLEET_VIEWER_TOKEN: TOKENS.FLOWFLEET_TRAINER_TOKEN,
      }),
    ).toEqual(['FLOWFLEET_*_TOKEN']);
  });

  it('treats empty strings as unset and maps limit overrides', () => {
    const env = parseCoordinatorEnv({
      REDIS_URL: 'redis://r:1',
      FLOWFLEET_AUTH: 'off',
      FLOWFLEET_PORT: '',
      FLOWFLEET_MAX_STEPS: '40',
      FLOWFLEET_MAX_BLOB_BYTES: '1024',
    });
    expect(env.FLOWFLEET_PORT).toBe(8080);
    expect(limitsFromEnv(env)).toMatchObject({ maxSteps: 40, maxBlobBytes: 1024 });
  });
});
