import { FlowfleetError } from '@flowfleet/errors';
import { resolveLimits, type Limits } from '@flowfleet/protocol';
import { redisEnvIssues, redisEnvShape } from '@flowfleet/redis';
import type { Role } from '@flowfleet/protocol/http-edge';
import { z } from 'zod';
import { ScalingClassesJsonSchema } from './scaling-config.js';
import { DEFAULT_RETENTION, type RetentionSettings } from './retention/retention-settings.js';

/** The bearer token of each role the coordinator grants. */
export type CoordinatorTokens = Readonly<Record<Role, string>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const positiveInt = z.coerce.number().int().min(1).optional();

const token = z.string().min(16, 'a token must be at least 16 characters');

/**
 * The coordinator's environment, read once at boot. Tokens are required unless `FLOWFLEET_AUTH=off`
 * is set explicitly (local development only: every caller then holds every role); that rule is
 * checked by `parseCoordinatorEnv` beside the schema so every problem is reported at once.
 */
export const coordinatorEnvSchema = z.object({
  // REDIS_URL, FLOWFLEET_REDIS_MODE, FLOWFLEET_REDIS_WAIT_REPLICAS, FLOWFLEET_REDIS_WAIT_TIMEOUT_MS.
  ...redisEnvShape,
  FLOWFLEET_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  FLOWFLEET_HOST: z.string().min(1).default('127.0.0.1'),
  FLOWFLEET_AUTH: z.enum(['on', 'off']).default('on'),
  FLOWFLEET_TRAINER_TOKEN: token.optional(),
  FLOWFLEET_VIEWER_TOKEN: token.optional(),
  FLOWFLEET_WORKER_TOKEN: token.optional(),
  FLOWFLEET_BLOB_DIR: z.string().min(1).default('./.flowfleet/blobs'),
  FLOWFLEET_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only (it goes inside {} hash tags)')
    .default('ff'),
  FLOWFLEET_HEARTBEAT_TTL_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
  FLOWFLEET_REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  FLOWFLEET_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // `1`: shut down when stdin closes (`flowfleet up` holds it open, so its death stops this child).
  FLOWFLEET_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
  // Edge limits (protocol DEFAULT_LIMITS when unset).
  FLOWFLEET_MAX_STEPS: positiveInt,
  FLOWFLEET_MAX_GROUP_SIZE: positiveInt,
  FLOWFLEET_MAX_LATENT_ELEMENTS: positiveInt,
  FLOWFLEET_MAX_PROMPT_CHARS: positiveInt,
  FLOWFLEET_MAX_BODY_BYTES: positiveInt,
  FLOWFLEET_MAX_BLOB_BYTES: positiveInt,
  // Autoscaling bounds per device class (JSON; see README "Scaling"); unset: 0..32 for every class.
  FLOWFLEET_SCALING_CLASSES: ScalingClassesJsonSchema.optional(),
  // Retention (DEFAULT_RETENTION when unset; README "Retention").
  FLOWFLEET_JOB_RETENTION_SECONDS: positiveInt,
  FLOWFLEET_JOBS_KEPT: positiveInt,
  FLOWFLEET_RESULT_RETENTION_SECONDS: positiveInt,
  FLOWFLEET_WEIGHT_VERSIONS_KEPT: positiveInt,
  FLOWFLEET_WEIGHT_GRACE_SECONDS: z.coerce.number().int().min(0).optional(),
  FLOWFLEET_RETENTION_SWEEP_MS: z.coerce.number().int().min(100).optional(),
  FLOWFLEET_EVENTS_MAX_LEN: z.coerce.number().int().min(100).optional(),
  /** The coordinator's egress cap on blob downloads (a token bucket; unset: no cap). */
  FLOWFLEET_EGRESS_BYTES_PER_S: positiveInt,
});

const TOKEN_VARIABLES = [
  'FLOWFLEET_TRAINER_TOKEN',
  'FLOWFLEET_VIEWER_TOKEN',
  'FLOWFLEET_WORKER_TOKEN',
] as const;

/** Token rules zod's object refinements would only report once every other field is valid. */
function tokenIssues(env: Readonly<Record<string, string | undefined>>): EnvIssue[] {
  if (env['FLOWFLEET_AUTH'] === 'off') return [];
  const issues: EnvIssue[] = TOKEN_VARIABLES.filter((name) => env[name] === undefined).map(
    (variable) => ({
      variable,
      message: 'required (or set FLOWFLEET_AUTH=off for local development)',
    }),
  );
  const given = TOKEN_VARIABLES.map((name) => env[name]).filter((value) => value !== undefined);
  if (new Set(given).size !== given.length) {
    issues.push({ variable: 'FLOWFLEET_*_TOKEN', message: 'the role tokens must differ' });
  }
  return issues;
}

/** One problem with one variable. */
export interface EnvIssue {
  readonly variable: string;
  readonly message: string;
}

/** The parsed environment. */
export type CoordinatorEnv = z.infer<typeof coordinatorEnvSchema>;

/** The edge limits the environment asks for (unset ones keep protocol's defaults). */
export function limitsFromEnv(env: CoordinatorEnv): Limits {
  return resolveLimits({
    maxSteps: env.FLOWFLEET_MAX_STEPS,
    maxGroupSize: env.FLOWFLEET_MAX_GROUP_SIZE,
    maxLatentElements: env.FLOWFLEET_MAX_LATENT_ELEMENTS,
    maxPromptChars: env.FLOWFLEET_MAX_PROMPT_CHARS,
    maxBodyBytes: env.FLOWFLEET_MAX_BODY_BYTES,
    maxBlobBytes: env.FLOWFLEET_MAX_BLOB_BYTES,
  });
}

/** The retention the environment asks for (unset bounds keep DEFAULT_RETENTION's). */
export function retentionFromEnv(env: CoordinatorEnv): RetentionSettings {
  const d = DEFAULT_RETENTION;
  return {
    jobRetentionSeconds: env.FLOWFLEET_JOB_RETENTION_SECONDS ?? d.jobRetentionSeconds,
    jobsKept: env.FLOWFLEET_JOBS_KEPT ?? d.jobsKept,
    resultRetentionSeconds: env.FLOWFLEET_RESULT_RETENTION_SECONDS ?? d.resultRetentionSeconds,
    weightVersionsKept: env.FLOWFLEET_WEIGHT_VERSIONS_KEPT ?? d.weightVersionsKept,
    weightGraceSeconds: env.FLOWFLEET_WEIGHT_GRACE_SECONDS ?? d.weightGraceSeconds,
    eventsMaxLen: env.FLOWFLEET_EVENTS_MAX_LEN ?? d.eventsMaxLen,
    sweepIntervalMs: env.FLOWFLEET_RETENTION_SWEEP_MS ?? d.sweepIntervalMs,
  };
}

/** The role tokens, or null when auth is explicitly off. */
export function tokensFromEnv(env: CoordinatorEnv): CoordinatorTokens | null {
  if (env.FLOWFLEET_AUTH === 'off') return null;
  const { FLOWFLEET_TRAINER_TOKEN, FLOWFLEET_VIEWER_TOKEN, FLOWFLEET_WORKER_TOKEN } = env;
  if (
    FLOWFLEET_TRAINER_TOKEN === undefined ||
    FLOWFLEET_VIEWER_TOKEN === undefined ||
    FLOWFLEET_WORKER_TOKEN === undefined
  ) {
    throw new FlowfleetError('COORD_ENV_INVALID', 'tokens are required unless FLOWFLEET_AUTH=off');
  }
  return {
    trainer: FLOWFLEET_TRAINER_TOKEN,
    viewer: FLOWFLEET_VIEWER_TOKEN,
    worker: FLOWFLEET_WORKER_TOKEN,
  };
}

/**
 * Parses the environment; every problem is listed in one message naming the variables.
 * @throws FlowfleetError `COORD_ENV_INVALID` with `details.issues` (variable → message).
 */
export function parseCoordinatorEnv(env: NodeJS.ProcessEnv): CoordinatorEnv {
  // Empty strings are "unset" (a blank line in an env file must not become a token or a port).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = coordinatorEnvSchema.safeParse(cleaned);
  const issues: EnvIssue[] = [
    ...(result.error?.issues ?? []).map((issue) => ({
      variable: issue.path.join('.') || '(env)',
      message: issue.message,
    })),
    ...tokenIssues(cleaned),
    ...redisEnvIssues(cleaned),
  ];
  if (result.success && issues.length === 0) return result.data;
  const lines = issues.map((issue) => `  ${issue.variable}: ${issue.message}`).join('\n');
  throw new FlowfleetError('COORD_ENV_INVALID', `invalid coordinator environment:\n${lines}`, {
    details: { issues },
  });
}
