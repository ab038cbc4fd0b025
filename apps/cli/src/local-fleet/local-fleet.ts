import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { parseLogLine, type LogLevel, type LogRecord } from '../format/log-line.js';
import { appLaunch, type FleetApp } from './app-launch.js';
import { coordinatorEnv, workerEnv, type LocalFleetTokens } from './fleet-env.js';
import { freePort } from './free-port.js';
import type { LocalRedis } from '../local-redis/local-redis.js';
import { resolveRedis } from '../local-redis/resolve-redis.js';
import { ServiceProcess, describeExit, type ServiceExit } from './service-process.js';
import { waitUntil } from './wait-until.js';

/** How to start a local fleet. */
export interface LocalFleetOptions {
  /** Worker children (default 2). */
  readonly workers?: number;
  /** Use this Redis instead of starting one (`--redis` / `REDIS_URL`). */
  readonly redisUrl?: string;
  /** The coordinator's port (default: a free one). */
  readonly port?: number;
  /** Redis key prefix (default `ff`). */
  readonly prefix?: string;
  /** The workers' FLOWFLEET_BACKEND (default `auto`). */
  readonly backend?: 'auto' | 'cpu' | 'ort-cpu';
  /** The children's FLOWFLEET_LOG_LEVEL (default `info`). */
  readonly logLevel?: LogLevel;
  /** Every line a child writes, parsed; `service` is `redis`, `coord`, `w1`, … */
  readonly onLog?: (service: string, record: LogRecord) => void;
  /** Deadline for Redis, the coordinator's health and every worker to be live (default 120 s). */
  readonly startTimeoutMs?: number;
  /** Aborts the start-up (what has started is stopped again). */
  readonly signal?: AbortSignal;
  /** The children's base environment (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A child that ended while the fleet was running. */
export interface UnexpectedExit {
  readonly service: string;
  readonly exit: ServiceExit;
  readonly output: string;
}

/** A running local fleet: Redis, one coordinator and N workers, all children of this process. */
export interface LocalFleet {
  /** The coordinator's base URL. */
  readonly url: string;
  /** The dashboard, with the viewer token (the page moves it out of the address bar). */
  readonly dashboardUrl: string;
  readonly tokens: LocalFleetTokens;
  readonly redis: LocalRedis;
  readonly prefix: string;
  readonly blobDir: string;
  readonly coordinatorPid: number;
  readonly workers: readonly {
    readonly id: string;
    readonly service: string;
    readonly pid: number;
  }[];
  /** Resolves when a child exits before `close()` (never rejects). */
  readonly unexpectedExit: Promise<UnexpectedExit>;
  /** A client with the trainer token. */
  client(): FlowfleetClient;
  /** Stops workers, then the coordinator, then Redis; removes temp dirs. Idempotent. */
  close(): Promise<void>;
  /** SIGKILLs every child now (a second Ctrl-C); `close()` still cleans up after it. */
  kill(): void;
}

const DEFAULT_WORKERS = 2;
const DEFAULT_START_TIMEOUT_MS = 120_000;
/** The workers' drain bound on shutdown; the CLI waits this plus a margin before SIGKILL. */
const WORKER_DRAIN_MS = 10_000;
const WORKER_STOP_MS = WORKER_DRAIN_MS + 10_000;
const COORDINATOR_STOP_MS = 15_000;

function token(role: string): string {
  return `${role}-${randomBytes(18).toString('base64url')}`;
}

function spawnApp(
  app: FleetApp,
  service: string,
  env: NodeJS.ProcessEnv,
  onLog: LocalFleetOptions['onLog'],
): ServiceProcess {
  const launch = appLaunch(app);
  return ServiceProcess.spawn({
    name: service,
    command: launch.command,
    args: launch.args,
    cwd: launch.cwd,
    env,
    ...(onLog === undefined ? {} : { onLine: (text) => onLog(service, parseLogLine(text)) }),
  });
}

function childFailed(service: ServiceProcess, phase: string): FlowfleetError {
  const exit = service.exit;
  const how = exit === undefined ? 'stopped' : describeExit(exit);
  return new FlowfleetError(
    'CLI_CHILD_FAILED',
    `${service.name} ${how} ${phase}; its last output:\n${service.outputTail.trimEnd() || '(none)'}`,
    { details: { service: service.name, exit: exit ?? null } },
  );
}

/** Errors of a coordinator that is still starting (not listening yet, Redis not up yet). */
function isStartingUp(error: unknown): boolean {
  return (
    isFlowfleetError(error, 'CLIENT_UNREACHABLE') ||
    isFlowfleetError(error, 'CLIENT_TIMEOUT') ||
    isFlowfleetError(error, 'COORD_REDIS_UNAVAILABLE')
  );
}

async function settle(steps: readonly (() => Promise<unknown>)[]): Promise<void> {
  // Every step runs even when one fails (STYLE rule 14); the first failure is rethrown after.
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/**
 * Starts a local fleet as child processes: Redis (given, a redis-server child, or a container),
 * the coordinator and `workers` workers (distinct ids `w1`…), with random role tokens and a temp
 * blob dir. Resolves once the coordinator is healthy and every worker is live in `/v1/fleet`.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE, CLI_CHILD_FAILED (a child exited during
 *   start-up, with its output), CLI_START_TIMEOUT; the signal's reason when aborted
 */
export async function startLocalFleet(options: LocalFleetOptions = {}): Promise<LocalFleet> {
  const workerCount = options.workers ?? DEFAULT_WORKERS;
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const { signal, onLog } = options;
  const prefix = options.prefix ?? 'ff';
  const tokens: LocalFleetTokens = {
    trainer: token('trainer'),
    viewer: token('viewer'),
    worker: token('worker'),
  };
  const services: ServiceProcess[] = [];
  let redis: LocalRedis | undefined;
  let blobDir: string | undefined;
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closing ??= settle([
      () =>
        Promise.all(services.filter((s) => s.name !== 'coord').map((s) => s.stop(WORKER_STOP_MS))),
      async () => services.find((s) => s.name === 'coord')?.stop(COORDINATOR_STOP_MS),
      async () => redis?.stop(),
      async () => blobDir !== undefined && rm(blobDir, { recursive: true, force: true }),
    ]);
    return closing;
  };

  try {
    redis = await resolveRedis({
      ...(options.redisUrl === undefined ? {} : { url: options.redisUrl }),
      ...(onLog === undefined
        ? {}
        : {
            onLine: (text) => onLog('redis', { level: undefined, text, fields: {}, routine: true }),
          }),
    });
    signal?.throwIfAborted();
    blobDir = await mkdtemp(join(tmpdir(), 'flowfleet-blobs-'));
    const port = options.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const common = {
      base: options.env ?? process.env,
      redisUrl: redis.url,
      prefix,
      logLevel: options.logLevel ?? 'info',
      tokens,
    };
    const coordinator = spawnApp(
      'coordinator',
      'coord',
      coordinatorEnv(common, port, blobDir),
      onLog,
    );
    services.push(coordinator);
    const client = FlowfleetClient.create({
      baseUrl: url,
      token: tokens.trainer,
      retry: false,
      timeoutMs: 5_000,
    });
    const checkChildren = (phase: string): void => {
      const dead = services.find((service) => !service.running);
      if (dead !== undefined) throw childFailed(dead, phase);
    };
    const healthy = (): Promise<unknown> =>
      waitUntil(
        async () => {
          checkChildren('during start-up');
          try {
            return await client.health();
          } catch (error) {
            if (isStartingUp(error)) return undefined;
            throw error;
          }
        },
        {
          what: `the coordinator at ${url}/healthz`,
          timeoutMs,
          ...(signal === undefined ? {} : { signal }),
        },
      );
    // Workers need only Redis to start, so on a fresh Redis they are spawned beside the
    // coordinator (the three start-ups overlap). A shared Redis may hold weight syncs a worker
    // catches up on by fetching blobs from the coordinator: then the coordinator comes first.
    if (redis.kind === 'external') await healthy();
    // A fresh Redis gets short ids; a shared one unique ones.
    const suffix = redis.kind === 'external' ? `-${randomBytes(2).toString('hex')}` : '';
    const workers = Array.from({ length: workerCount }, (_, i) => {
      const service = `w${i + 1}`;
      const id = `${service}${suffix}`;
      const env = workerEnv(common, {
        coordinatorUrl: url,
        workerId: id,
        backend: options.backend ?? 'auto',
        drainTimeoutMs: WORKER_DRAIN_MS,
      });
      const child = spawnApp('worker', service, env, onLog);
      services.push(child);
      return { id, service, child };
    });

    await healthy();
    const ids = new Set(workers.map((w) => w.id));
    await waitUntil(
      async () => {
        checkChildren('during start-up');
        const fleet = await client.fleet();
        const live = fleet.workers.filter((w) => w.alive && ids.has(w.workerId)).length;
        return live === ids.size ? fleet : undefined;
      },
      {
        what: `${ids.size} live workers`,
        timeoutMs,
        intervalMs: 200,
        ...(signal === undefined ? {} : { signal }),
      },
    );

    const unexpectedExit = Promise.race(
      services.map(async (service) => {
        const exit = await service.exited;
        // While closing, exits are expected: this promise then never settles.
        if (closing !== undefined) await new Promise<never>(() => undefined);
        return { service: service.name, exit, output: service.outputTail };
      }),
    );
    const localRedis = redis;
    const localBlobDir = blobDir;
    return {
      url,
      dashboardUrl: `${url}/?token=${tokens.viewer}`,
      tokens,
      redis: localRedis,
      prefix,
      blobDir: localBlobDir,
      coordinatorPid: coordinator.pid ?? -1,
      workers: workers.map((w) => ({ id: w.id, service: w.service, pid: w.child.pid ?? -1 })),
      unexpectedExit,
      client: () => FlowfleetClient.create({ baseUrl: url, token: tokens.trainer }),
      close,
      kill() {
        for (const service of services) service.kill();
        redis?.kill?.();
      },
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
