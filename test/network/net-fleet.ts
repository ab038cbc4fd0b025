// A fleet on test hosts (test/harness/netns.ts): Redis, the coordinator and each worker are
// processes on hosts of their own, talking over the test network by their own addresses. The test
// process plays the trainer: its HTTP goes through a relay on the `trainer` host (so that host's
// link carries it), and it watches Redis through Redis's Unix socket (so no cut blinds it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { JobStatusSchema, type JobStatus } from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { Agent, fetch as undiciFetch } from 'undici';
import { createTestNetwork, type TestNetwork } from '../harness/netns.js';
import {
  spawnOnHost,
  startRelay,
  tsNode,
  type HostProcess,
  type RelayOptions,
} from '../harness/netns-process.js';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';
import { TOKENS, waitUntil } from '../worker/fleet-fixture.js';

/** Inside its own namespace every port is free: the fleet's services use their usual ones. */
const REDIS_PORT = 6379;
const COORDINATOR_PORT = 8080;
/**
 * How long a coordinator or worker process may take to come up: each child loads the app through
 * tsx, which on a machine busy with other work takes tens of seconds.
 */
export const STARTUP_TIMEOUT_MS = 120_000;

/** What a network fleet is started with. */
export interface NetFleetOptions {
  /** Worker host names (each gets its own host), e.g. `['w1', 'w2']`. */
  readonly workers: readonly string[];
  /** More hosts (e.g. `wan` for a delaying relay). */
  readonly extraHosts?: readonly string[];
  /** The coordinator's and workers' heartbeat TTL. */
  readonly heartbeatTtlMs: number;
  /** Extra coordinator environment. */
  readonly coordinatorEnv?: Record<string, string>;
}

/** A fleet whose every process is a host on a test network. */
export interface NetFleet {
  readonly network: TestNetwork;
  readonly prefix: string;
  readonly redisServer: RedisServer;
  /** The test's own Redis client, over the Unix socket. */
  readonly redis: Redis;
  readonly redisUrl: string;
  readonly coordinatorUrl: string;
  readonly blobDir: string;
  /** A relay the test's HTTP goes through: the `trainer` host's link carries it. */
  readonly trainerSocket: string;
  coordinator(): HostProcess;
  startCoordinator(): Promise<HostProcess>;
  /** Starts a worker process on `host` (env on top of the fleet's), waits for its heartbeat. */
  startWorker(host: string, env?: Record<string, string>): Promise<HostProcess>;
  /** A relay on `host` (e.g. a delaying one in front of Redis). */
  startRelay(host: string, options: RelayOptions): Promise<HostProcess>;
  /** An HTTP request to the coordinator as the trainer (through the trainer host). */
  api(path: string, init?: ApiInit): Promise<ApiAnswer>;
  /** The trainer's fetch (for the SDK's `fetch` option). */
  readonly fetch: typeof fetch;
  status(id: string): Promise<JobStatus>;
  waitForCompletion(id: string, timeoutMs: number): Promise<JobStatus>;
  isAlive(workerId: string): Promise<boolean>;
  /** Stops every process it started, removes the namespaces, keys and directories. */
  close(): Promise<void>;
}

/** A request of {@link NetFleet.api}. */
export interface ApiInit {
  readonly method?: string;
  readonly json?: unknown;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
}

/** An answer of {@link NetFleet.api}. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Starts Redis, the trainer relay and the coordinator on a fresh test network. */
export async function startNetFleet(name: string, options: NetFleetOptions): Promise<NetFleet> {
  const dir = await mkdtemp(join(tmpdir(), 'flowfleet-net-'));
  const network = await createTestNetwork([
    'redis',
    'coord',
    'trainer',
    ...options.workers,
    ...(options.extraHosts ?? []),
  ]);
  const processes: HostProcess[] = [];
  const prefix = uniquePrefix(name);
  const blobDir = join(dir, 'blobs');
  const trainerSocket = join(dir, 'coordinator.sock');
  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  // One connection: a request sent after another reuses its (established) connection, which a
  // test relies on to lose an answer with a one-way cut.
  const agent = new Agent({ connect: { socketPath: trainerSocket }, connections: 1 });
  const close = async (): Promise<void> => {
    await Promise.allSettled(processes.map((child) => child.stop('SIGKILL')));
    await agent.close().catch(() => undefined);
    if (redis !== undefined) {
      redis.disconnect();
    }
    await redisServer?.stop();
    await network.destroy();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const redisHost = network.host('redis');
    redisServer = await startRedisServer({
      host: redisHost.address,
      port: REDIS_PORT,
      command: ['ip', 'netns', 'exec', redisHost.ns],
      unixSocket: join(dir, 'redis.sock'),
    });
    redis = new Redis({ path: join(dir, 'redis.sock'), maxRetriesPerRequest: null });
    const coordinatorUrl = `http://${network.host('coord').address}:${COORDINATOR_PORT}`;
    processes.push(
      await startRelay(network, 'trainer', {
        listen: trainerSocket,
        target: network.host('coord').address,
        port: COORDINATOR_PORT,
      }),
    );
    const trainerFetch = ((input: string | URL, init?: RequestInit) =>
      undiciFetch(String(input), {
        ...(init as Record<string, unknown>),
        dispatcher: agent,
      })) as unknown as typeof fetch;
    const api = async (path: string, init: ApiInit = {}): Promise<ApiAnswer> => {
      const response = await trainerFetch(`${coordinatorUrl}${path}`, {
        method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
        headers: {
          authorization: `Bearer ${TOKENS.trainer}`,
          ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
        signal: AbortSignal.timeout(init.timeoutMs ?? 15_000),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: kept as text.
      }
      return { status: response.status, body };
    };
    const status = async (id: string): Promise<JobStatus> => {
      const answer = await api(`/v1/rollouts/${id}`);
      if (answer.status !== 200) throw new Error(`status ${id}: ${JSON.stringify(answer.body)}`);
      return JobStatusSchema.parse(answer.body);
    };
    const redisUrl = redisServer.url;
    const keys = coordinatorKeys(prefix);
    let coordinator: HostProcess | undefined;
    const fleet: NetFleet = {
      network,
      prefix,
      redisServer,
      redis,
      redisUrl,
      coordinatorUrl,
      blobDir,
      trainerSocket,
      fetch: trainerFetch,
      coordinator: () => {
        if (coordinator === undefined) throw new Error('no coordinator started');
        return coordinator;
      },
      async startCoordinator() {
        const started = spawnOnHost(network, 'coord', tsNode('apps/coordinator/src/main.ts'), {
          REDIS_URL: redisUrl,
          FLOWFLEET_HOST: network.host('coord').address,
          FLOWFLEET_PORT: String(COORDINATOR_PORT),
          FLOWFLEET_PREFIX: prefix,
          FLOWFLEET_BLOB_DIR: blobDir,
          FLOWFLEET_TRAINER_TOKEN: TOKENS.trainer,
          FLOWFLEET_VIEWER_TOKEN: TOKENS.viewer,
          FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
          FLOWFLEET_HEARTBEAT_TTL_MS: String(options.heartbeatTtlMs),
          FLOWFLEET_LOG_LEVEL: 'info',
          ...options.coordinatorEnv,
        });
        processes.push(started);
        coordinator = started;
        let last: unknown;
        await waitUntil(
          async () => {
            if (started.process.exitCode !== null) {
              throw new Error(`the coordinator exited:\n${started.output()}`);
            }
            last = await api('/healthz', { timeoutMs: 1_000 }).catch((error: unknown) => error);
            return (last as ApiAnswer | undefined)?.status === 200 ? true : undefined;
          },
          'the coordinator to answer /healthz',
          STARTUP_TIMEOUT_MS,
        ).catch((error: unknown) => {
          throw new Error(
            `${(error as Error).message}: last ${String(last)} ${JSON.stringify(last)}\n${started.output()}`,
          );
        });
        return started;
      },
      async startWorker(host, env = {}) {
        const workerId = `${host}-${prefix.slice(-6)}`;
        const worker = spawnOnHost(network, host, tsNode('apps/worker/src/main.ts'), {
          REDIS_URL: redisUrl,
          FLOWFLEET_COORDINATOR_URL: coordinatorUrl,
          FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
          FLOWFLEET_PREFIX: prefix,
          FLOWFLEET_WORKER_ID: workerId,
          FLOWFLEET_BACKEND: 'ort-cpu',
          FLOWFLEET_HEARTBEAT_TTL_MS: String(options.heartbeatTtlMs),
          FLOWFLEET_LOG_LEVEL: 'info',
          FLOWFLEET_POLL_MS: '500',
          FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
          ...env,
        });
        processes.push(worker);
        await waitUntil(
          async () => {
            if (worker.process.exitCode !== null) {
              throw new Error(`worker ${workerId} exited:\n${worker.output()}`);
            }
            return (await redis?.exists(keys.heartbeat(workerId))) === 1 ? true : undefined;
          },
          `worker ${workerId} to register`,
          STARTUP_TIMEOUT_MS,
        );
        return worker;
      },
      async startRelay(host, relayOptions) {
        const relay = await startRelay(network, host, relayOptions);
        processes.push(relay);
        return relay;
      },
      api,
      status,
      async waitForCompletion(id, timeoutMs) {
        return waitUntil(
          async () => {
            const job = await status(id).catch(() => undefined);
            if (job?.status === 'failed') {
              throw new Error(`job ${id} failed: ${JSON.stringify(job.error)}`);
            }
            return job?.status === 'completed' ? job : undefined;
          },
          `job ${id} to complete`,
          timeoutMs,
        );
      },
      async isAlive(workerId) {
        return (await redis?.exists(keys.heartbeat(workerId))) === 1;
      },
      close,
    };
    return fleet;
  } catch (error) {
    await close();
    throw error;
  }
}

/** The worker id a worker on `host` gets in `fleet`. */
export function workerIdOn(fleet: Pick<NetFleet, 'prefix'>, host: string): string {
  return `${host}-${fleet.prefix.slice(-6)}`;
}
