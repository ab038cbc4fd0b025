import { z } from 'zod';
import { RedisModeSchema, type RedisMode } from './redis-mode.js';
import type { ReplicationPolicy } from './replication.js';
import { redisUrlIssue } from './url-issue.js';

/** The default `FLOWFLEET_REDIS_WAIT_TIMEOUT_MS`: how long a write waits for its replicas. */
export const DEFAULT_WAIT_TIMEOUT_MS = 1_000;

/**
 * The Redis variables every app's env schema spreads in (one owner, so they mean the same
 * everywhere). `REDIS_URL`'s shape depends on the mode: `redisEnvIssues` checks it.
 */
export const redisEnvShape = {
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /**
   * `standalone` (default), `cluster` (REDIS_URL names any seed node) or `sentinel` (REDIS_URL
   * lists the sentinels and names the master group).
   */
  FLOWFLEET_REDIS_MODE: RedisModeSchema,
  /** Replicas a write must reach before it is acknowledged (`WAIT`; ADR 010). Default 0. */
  FLOWFLEET_REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).default(0),
  FLOWFLEET_REDIS_WAIT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(60_000)
    .default(DEFAULT_WAIT_TIMEOUT_MS),
} as const;

/** The Redis variables as parsed. */
export interface RedisEnv {
  readonly REDIS_URL: string;
  readonly FLOWFLEET_REDIS_MODE: RedisMode;
  readonly FLOWFLEET_REDIS_WAIT_REPLICAS: number;
  readonly FLOWFLEET_REDIS_WAIT_TIMEOUT_MS: number;
}

/**
 * Cross-variable rules: REDIS_URL must fit the mode, and WAIT needs one master connection (not a
 * cluster). Reads the raw (cleaned) environment so they are reported with every other problem.
 */
export function redisEnvIssues(
  env: Readonly<Record<string, string | undefined>>,
): { variable: string; message: string }[] {
  const mode = RedisModeSchema.safeParse(env['FLOWFLEET_REDIS_MODE']);
  if (!mode.success) return [];
  const issues: { variable: string; message: string }[] = [];
  const url = env['REDIS_URL'];
  if (url !== undefined && /^rediss?:\/\//.test(url)) {
    const issue = redisUrlIssue(url, mode.data);
    if (issue !== undefined) issues.push({ variable: 'REDIS_URL', message: issue });
  }
  const replicas = Number(env['FLOWFLEET_REDIS_WAIT_REPLICAS'] ?? '0');
  if (mode.data === 'cluster' && replicas > 0) {
    issues.push({
      variable: 'FLOWFLEET_REDIS_WAIT_REPLICAS',
      message: 'not supported with FLOWFLEET_REDIS_MODE=cluster (use standalone or sentinel)',
    });
  }
  return issues;
}

/** The replication policy the environment asks for. */
export function replicationFromEnv(env: RedisEnv): ReplicationPolicy {
  return {
    replicas: env.FLOWFLEET_REDIS_WAIT_REPLICAS,
    timeoutMs: env.FLOWFLEET_REDIS_WAIT_TIMEOUT_MS,
  };
}
