import { hostname } from 'node:os';
import { FlowfleetError } from '@flowfleet/errors';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { DEVICE_CHOICES } from '@flowfleet/platform';
import { redisEnvIssues, redisEnvShape, replicationFromEnv } from '@flowfleet/redis';
import { z } from 'zod';
import { parseExtraKernels } from './compute/extra-kernels.js';
import {
  DEFAULT_LOCK_SETTINGS,
  DEFAULT_TIMINGS,
  peerBindHost,
  type WorkerOptions,
} from './worker-options.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The default worker id: `<host>-<pid>`, reduced to the characters a Redis key part allows. */
export function defaultWorkerId(host = hostname(), pid = process.pid): string {
  const safeHost = host.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 100) || 'host';
  return `${safeHost}-${pid}`;
}

/** FLOWFLEET_MODELS as card ids: each a shipped card's (DEFAULT_CARD_REGISTRY), none empty. */
function modelIds(text: string, ctx: z.RefinementCtx): string[] {
  const ids = text.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !DEFAULT_CARD_REGISTRY.has(id));
  if (unknown.length > 0) {
    const known = DEFAULT_CARD_REGISTRY.ids.join(', ');
    const names = unknown.map((id) => `'${id}'`).join(', ');
    ctx.addIssue({ code: 'custom', message: `unknown model card ${names} (known: ${known})` });
    return z.NEVER;
  }
  return ids;
}

/**
 * The worker's environment, read once at boot by `main.ts`. Durations are in milliseconds; the
 * lock and poll settings exist so tests can shorten them (README "Locks and stalls").
 * `FLOWFLEET_PLATFORM_OVERRIDE` (test-only) is read by @flowfleet/platform itself.
 */
export const workerEnvSchema = z.object({
  // REDIS_URL, FLOWFLEET_REDIS_MODE, FLOWFLEET_REDIS_WAIT_REPLICAS, FLOWFLEET_REDIS_WAIT_TIMEOUT_MS.
  ...redisEnvShape,
  FLOWFLEET_COORDINATOR_URL: z.url({
    protocol: /^https?$/,
    error: 'must be an http:// or https:// URL',
  }),
  FLOWFLEET_WORKER_TOKEN: z.string().min(16, 'a token must be at least 16 characters').optional(),
  FLOWFLEET_CONCURRENCY: count(1, 256).default(1),
  FLOWFLEET_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only (it goes inside {} hash tags)')
    .default('ff'),
  FLOWFLEET_WORKER_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, '1–128 of [A-Za-z0-9._-]')
    .optional(),
  FLOWFLEET_HEARTBEAT_TTL_MS: count(1_000, 600_000).default(15_000),
  FLOWFLEET_BACKEND: z.enum(['auto', 'ort-cpu', 'cpu']).default('auto'),
  FLOWFLEET_DEVICE: z.enum(DEVICE_CHOICES as ['auto', 'cpu', 'cuda', 'webgpu']).default('auto'),
  FLOWFLEET_ORT_THREADS: count(1, 64).optional(),
  FLOWFLEET_ORT_INTRA_OP_THREADS: count(1, 64).default(1),
  FLOWFLEET_EXTRA_KERNELS: z.string().optional(),
  /** Card ids to load, comma-separated (unset: the shipped cards marked loadByDefault). */
  FLOWFLEET_MODELS: z.string().transform(modelIds).optional(),
  FLOWFLEET_LOCK_MS: count(1_000, 3_600_000).default(DEFAULT_LOCK_SETTINGS.lockDurationMs),
  FLOWFLEET_STALLED_INTERVAL_MS: count(500, 3_600_000).default(
    DEFAULT_LOCK_SETTINGS.stalledIntervalMs,
  ),
  FLOWFLEET_MAX_STALLED_COUNT: count(1, 100).default(DEFAULT_LOCK_SETTINGS.maxStalledCount),
  FLOWFLEET_DRAIN_TIMEOUT_MS: count(0, 3_600_000).default(DEFAULT_TIMINGS.drainTimeoutMs),
  FLOWFLEET_RESCAN_MS: count(100, 3_600_000).default(DEFAULT_TIMINGS.rescanIntervalMs),
  FLOWFLEET_POLL_MS: count(10, 60_000).default(DEFAULT_TIMINGS.pollIntervalMs),
  FLOWFLEET_UPLOAD_RETRY_MS: count(0, 3_600_000).default(DEFAULT_TIMINGS.uploadRetryMs),
  FLOWFLEET_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // `1`: shut down when stdin closes (`flowfleet up` holds it open, so its death stops this child).
  FLOWFLEET_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
  /** The peer server's port (`0`: ephemeral, the default; `off`: no peer server). */
  FLOWFLEET_PEER_PORT: z.union([z.literal('off'), count(0, 65_535)]).default(0),
  /** The peer server's bind address (default: 127.0.0.1 for a loopback coordinator, else 0.0.0.0). */
  FLOWFLEET_PEER_HOST: z.string().min(1).optional(),
  FLOWFLEET_PEER_ADVERTISE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional(),
  /** The peer server's egress cap (a token bucket; unset: no cap). */
  FLOWFLEET_EGRESS_BYTES_PER_S: count(1, Number.MAX_SAFE_INTEGER).optional(),
});

/** The parsed environment. */
export type WorkerEnv = z.infer<typeof workerEnvSchema>;

/** One problem with one variable. */
export interface EnvIssue {
  readonly variable: string;
  readonly message: string;
}

/**
 * Parses the environment; every problem is listed in one message naming the variables.
 * @throws FlowfleetError `WORKER_ENV_INVALID` with `details.issues` (variable → message).
 */
export function parseWorkerEnv(env: NodeJS.ProcessEnv): WorkerEnv {
  // Empty strings are "unset" (a blank line in an env file must not become a token or a number).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = workerEnvSchema.safeParse(cleaned);
  const issues: EnvIssue[] = [
    ...(result.error?.issues ?? []).map((issue) => ({
      variable: issue.path.join('.') || '(env)',
      message: issue.message,
    })),
    ...redisEnvIssues(cleaned),
  ];
  const extra = cleaned['FLOWFLEET_EXTRA_KERNELS'];
  if (extra !== undefined) {
    try {
      parseExtraKernels(extra);
    } catch (error) {
      issues.push({ variable: 'FLOWFLEET_EXTRA_KERNELS', message: (error as Error).message });
    }
  }
  if (result.success && issues.length === 0) return result.data;
  const lines = issues.map((issue) => `  ${issue.variable}: ${issue.message}`).join('\n');
  throw new FlowfleetError('WORKER_ENV_INVALID', `invalid worker environment:\n${lines}`, {
    details: { issues },
  });
}

/** The createWorker options the environment asks for (without the logger). */
export function workerOptionsFromEnv(env: WorkerEnv): WorkerOptions {
  return {
    redisUrl: env.REDIS_URL,
    redisMode: env.FLOWFLEET_REDIS_MODE,
    redisReplication: replicationFromEnv(env),
    coordinatorUrl: env.FLOWFLEET_COORDINATOR_URL,
    ...(env.FLOWFLEET_WORKER_TOKEN !== undefined
      ? { workerToken: env.FLOWFLEET_WORKER_TOKEN }
      : {}),
    workerId: env.FLOWFLEET_WORKER_ID ?? defaultWorkerId(),
    prefix: env.FLOWFLEET_PREFIX,
    concurrency: env.FLOWFLEET_CONCURRENCY,
    heartbeatTtlMs: env.FLOWFLEET_HEARTBEAT_TTL_MS,
    backend: env.FLOWFLEET_BACKEND,
    device: env.FLOWFLEET_DEVICE,
    ortThreads: env.FLOWFLEET_ORT_THREADS ?? env.FLOWFLEET_CONCURRENCY,
    ortIntraOpThreads: env.FLOWFLEET_ORT_INTRA_OP_THREADS,
    // Unset: the cards marked loadByDefault (a published-size card loads only when named).
    ...(env.FLOWFLEET_MODELS === undefined ? {} : { models: env.FLOWFLEET_MODELS }),
    extraKernels:
      env.FLOWFLEET_EXTRA_KERNELS === undefined
        ? []
        : parseExtraKernels(env.FLOWFLEET_EXTRA_KERNELS),
    locks: {
      lockDurationMs: env.FLOWFLEET_LOCK_MS,
      stalledIntervalMs: env.FLOWFLEET_STALLED_INTERVAL_MS,
      maxStalledCount: env.FLOWFLEET_MAX_STALLED_COUNT,
    },
    drainTimeoutMs: env.FLOWFLEET_DRAIN_TIMEOUT_MS,
    rescanIntervalMs: env.FLOWFLEET_RESCAN_MS,
    pollIntervalMs: env.FLOWFLEET_POLL_MS,
    uploadRetryMs: env.FLOWFLEET_UPLOAD_RETRY_MS,
    peer:
      env.FLOWFLEET_PEER_PORT === 'off'
        ? false
        : {
            host: env.FLOWFLEET_PEER_HOST ?? peerBindHost(env.FLOWFLEET_COORDINATOR_URL),
            port: env.FLOWFLEET_PEER_PORT,
            ...(env.FLOWFLEET_PEER_ADVERTISE_URL === undefined
              ? {}
              : { advertiseUrl: env.FLOWFLEET_PEER_ADVERTISE_URL }),
          },
    ...(env.FLOWFLEET_EGRESS_BYTES_PER_S === undefined
      ? {}
      : { egressBytesPerSecond: env.FLOWFLEET_EGRESS_BYTES_PER_S }),
  };
}
