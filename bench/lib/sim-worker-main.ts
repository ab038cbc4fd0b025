// One process of bench:scale's simulated fleet: `BENCH_SIM_COUNT` workers numbered from
// `BENCH_SIM_FIRST`, each with its own Redis connection (as a real worker's command connection:
// `createRedis` in FLOWFLEET_REDIS_MODE, an ioredis Cluster on a cluster)
// and the worker's own ManifestKeeper + WorkerRegistration: the same manifest, set membership and
// heartbeat writes at the production heartbeat interval. They run no jobs (load: 0 active, no
// lanes). Registrations are spread over `BENCH_SIM_RAMP_MS` so heartbeats are not in lock-step,
// with at most `BENCH_SIM_CONNECTS` (default 16) connecting at once per process.
// IPC: `{op: 'status'}` → `{registered, failed}`; `{op: 'cpu'}` → process.cpuUsage(); SIGTERM
// closes every registration (heartbeat deleted) and connection, then exits.
import { fleetKeys } from '@flowfleet/protocol';
import { createRedis, RedisModeSchema, type RedisClient } from '@flowfleet/redis';
import { DEFAULT_HEARTBEAT_TTL_MS, ManifestKeeper, WorkerRegistration } from '@flowfleet/worker';
import { pino } from 'pino';
import {
  profileAt,
  SIM_PROFILES,
  simManifestBase,
  simWeights,
  type SimManifestBase,
} from './sim-platforms.js';

function envInt(name: string, fallback?: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be an integer ≥ 0`);
  return value;
}

const redisUrl = process.env['REDIS_URL'] ?? '';
const mode = RedisModeSchema.parse(process.env['FLOWFLEET_REDIS_MODE'] ?? 'standalone');
const prefix = process.env['FLOWFLEET_PREFIX'] ?? 'ff';
const first = envInt('BENCH_SIM_FIRST');
const count = envInt('BENCH_SIM_COUNT');
const rampMs = envInt('BENCH_SIM_RAMP_MS', 5_000);
const connectsInFlight = Math.max(1, envInt('BENCH_SIM_CONNECTS', 16));
const heartbeatTtlMs = envInt('FLOWFLEET_HEARTBEAT_TTL_MS', DEFAULT_HEARTBEAT_TTL_MS);
const keys = fleetKeys(prefix);
const logger = pino({ level: 'warn', base: { service: 'sim-worker', pid: process.pid } });
const bases = new Map<string, SimManifestBase>(
  SIM_PROFILES.map((profile) => [profile.name, simManifestBase(profile)]),
);

interface SimWorker {
  readonly redis: RedisClient;
  readonly registration: WorkerRegistration;
}

const workers: SimWorker[] = [];
let failed = 0;
const REGISTER_ATTEMPTS = 20;
let closing = false;

async function tryStartOne(index: number): Promise<boolean> {
  const workerId = `sim-${String(index).padStart(5, '0')}`;
  const profile = profileAt(index);
  const redis = createRedis(redisUrl, {
    mode,
    lazyConnect: true,
    maxRetriesPerRequest: null,
    connectionName: `flowfleet-worker:${workerId}:main`,
  });
  redis.on('error', (error) => logger.debug({ err: error, workerId }, 'redis connection error'));
  const keeper = new ManifestKeeper({
    input: {
      ...bases.get(profile.name)!,
      workerId,
      host: `sim-host-${Math.floor(index / (profile.concurrency > 2 ? 8 : 1))}`,
      pid: 1000 + index,
      startedAt: new Date().toISOString(),
    },
    weights: () => simWeights(index),
  });
  const registration = new WorkerRegistration({
    redis,
    keys,
    workerId,
    heartbeatTtlMs,
    manifest: () => keeper.current(),
    load: () => ({ activeJobs: 0, lanes: [] }),
    logger: logger.child({ workerId }),
  });
  try {
    await redis.connect();
    await registration.start();
    workers.push({ redis, registration });
    return true;
  } catch (error) {
    logger.warn({ err: error, workerId }, 'simulated worker failed to register');
    redis.disconnect();
    return false;
  }
}

/** Registers worker `index`, retrying a failed connect (a cluster's slot refresh under load). */
async function startOne(index: number): Promise<void> {
  for (let attempt = 1; attempt <= REGISTER_ATTEMPTS; attempt += 1) {
    if (closing || (await tryStartOne(index))) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(3_000, 500 * attempt)));
  }
  failed += 1;
  logger.error({ index }, `simulated worker failed to register ${REGISTER_ATTEMPTS} times`);
}

/**
 * Starts every worker: no earlier than its place on the ramp, and at most `connectsInFlight` at
 * a time, so a process's own connects never starve its event loop (an ioredis Cluster connect
 * costs ~7 ms of CPU here, most of it mapping 16 384 slots, and its CLUSTER SLOTS fails after
 * `slotsRefreshTimeout` when replies wait behind thousands of other connects).
 */
async function startAll(): Promise<void> {
  const t0 = performance.now();
  let next = 0;
  const starter = async (): Promise<void> => {
    while (!closing && next < count) {
      const i = next;
      next += 1;
      const dueMs = (i / count) * rampMs - (performance.now() - t0);
      if (dueMs > 1) await new Promise((resolve) => setTimeout(resolve, dueMs));
      await startOne(first + i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(connectsInFlight, count) }, starter));
}

async function closeAll(): Promise<void> {
  closing = true;
  await Promise.allSettled(
    workers.map(async ({ redis, registration }) => {
      await registration.close();
      await redis.quit();
    }),
  );
}

process.on('message', (message: { op: string }) => {
  if (message.op === 'status') process.send?.({ registered: workers.length, failed });
  if (message.op === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.once('SIGTERM', () => void closeAll().finally(() => process.exit(0)));
await startAll();
