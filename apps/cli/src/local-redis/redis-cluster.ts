import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { freePort } from '../local-fleet/free-port.js';
import type { ServiceProcess } from '../local-fleet/service-process.js';
import { INSTALL_REDIS_HINT } from './local-redis.js';
import { startRedisChild } from './redis-child.js';

/** How to start a local Redis Cluster. */
export interface RedisClusterOptions {
  /** Number of masters (no replicas); default 3, at least 3 (what `redis-cli --cluster create` accepts). */
  readonly masters?: number;
  /** Turn on the append-only file on every node. Default false. */
  readonly appendonly?: boolean;
  /** Every node's policy; default `noeviction` (the only one the coordinator accepts). */
  readonly maxmemoryPolicy?: string;
  /** `cluster-node-timeout` in ms (how soon a dead master marks the cluster failed). Default 2000. */
  readonly nodeTimeoutMs?: number;
  /** Deadline for the whole start-up (all PINGs, create, `cluster_state:ok`). Default 20 s. */
  readonly startTimeoutMs?: number;
  /** The server binary (default `redis-server`); `redis-cli` is taken from PATH. */
  readonly command?: string;
}

/** One master of a local cluster. */
export interface RedisClusterNode {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** The node's own directory (nodes.conf, AOF). */
  readonly dir: string;
  /** The current child's pid (changes on restart; -1 while killed). */
  readonly pid: number;
  /** True unless killed (and not yet restarted). */
  readonly running: boolean;
}

/** A running local Redis Cluster of masters on free ports of 127.0.0.1. */
export interface RedisCluster {
  /** The first node's URL: a seed that ioredis Cluster (FLOWFLEET_REDIS_MODE=cluster) accepts. */
  readonly url: string;
  /** Every node, in start order (node i owns the i-th slot range `redis-cli --cluster create` gave it). */
  readonly nodes: readonly RedisClusterNode[];
  /** Shuts every node down (SIGTERM, SIGKILL after 5 s) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** Sends `signal` (default SIGKILL) to node `index` and waits for it to exit. */
  killNode(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts node `index` again on its port and dir (it rejoins from nodes.conf); waits for `cluster_state:ok`. */
  restartNode(index: number): Promise<void>;
  /** Resolves once every running node reports `cluster_state:ok` (polls until `timeoutMs`, default 20 s). */
  waitUntilOk(timeoutMs?: number): Promise<void>;
}

const HOST = '127.0.0.1';
const CLI_TIMEOUT_MS = 5_000;
const DEFAULT_MASTERS = 3;

/**
 * Runs `redis-cli` with `args` and resolves with its stdout.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE when redis-cli is missing; CLI_CHILD_FAILED when it fails
 */
export function redisCli(args: readonly string[], timeoutMs = CLI_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', [...args], { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(
          new FlowfleetError(
            'CLI_REDIS_UNAVAILABLE',
            `redis-cli is not on PATH: ${INSTALL_REDIS_HINT}`,
            { details: { reason: 'ENOENT' }, cause: error },
          ),
        );
      }
      reject(
        new FlowfleetError('CLI_CHILD_FAILED', `redis-cli ${args.join(' ')} failed: ${stderr}`, {
          details: { service: 'redis-cli', output: `${stdout}${stderr}`.slice(-4_000) },
          cause: error,
        }),
      );
    });
  });
}

interface NodeSlot {
  readonly port: number;
  readonly busPort: number;
  readonly dir: string;
  server: ServiceProcess | undefined;
}

function nodeArgs(node: NodeSlot, options: RedisClusterOptions): string[] {
  return [
    '--port',
    String(node.port),
    // An explicit bus port: port + 10000 of an ephemeral port may be taken or above 65535.
    '--cluster-port',
    String(node.busPort),
    '--bind',
    HOST,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(options.nodeTimeoutMs ?? 2_000),
    '--dir',
    node.dir,
    '--save',
    '',
    '--appendonly',
    options.appendonly === true ? 'yes' : 'no',
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
}

async function startNode(node: NodeSlot, options: RedisClusterOptions, deadline: number) {
  node.server = await startRedisChild(
    {
      what: 'cluster node',
      host: HOST,
      port: node.port,
      args: nodeArgs(node, options),
      ...(options.command === undefined ? {} : { command: options.command }),
    },
    deadline,
  );
}

/** The `cluster_state` a node reports (`ok`, `fail`), or the error text when it does not answer. */
async function clusterState(port: number): Promise<string> {
  try {
    const info = await redisCli(['-h', HOST, '-p', String(port), 'CLUSTER', 'INFO'], 1_000);
    return /^cluster_state:(\S+)/m.exec(info)?.[1] ?? 'unknown';
  } catch (error) {
    return (error as Error).message;
  }
}

/** Ports for `count` nodes plus their buses, all distinct. */
async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(HOST));
  return [...ports];
}

/**
 * Starts a real Redis Cluster of `masters` (default 3) `redis-server --cluster-enabled yes` nodes on
 * free ports, joins them with `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes` and
 * resolves once every node reports `cluster_state:ok`. Everything lives in one temp dir that
 * `stop()` removes; nothing touches a Redis it did not start.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE (redis-server or redis-cli missing), CLI_CHILD_FAILED,
 *   CLI_START_TIMEOUT; CLI_USAGE for fewer than 3 masters
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? DEFAULT_MASTERS;
  if (!Number.isInteger(masters) || masters < 3) {
    throw new FlowfleetError(
      'CLI_USAGE',
      `a Redis Cluster needs at least 3 masters, got ${masters}`,
      {
        details: { masters },
      },
    );
  }
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const root = await mkdtemp(join(tmpdir(), 'flowfleet-redis-cluster-'));
  const ports = await distinctPorts(masters * 2);
  const slots: NodeSlot[] = [];
  for (let i = 0; i < masters; i++) {
    const dir = join(root, `node-${i}`);
    await mkdir(dir);
    slots.push({ port: ports[i]!, busPort: ports[masters + i]!, dir, server: undefined });
  }

  const waitUntilOk = async (waitMs = 20_000): Promise<void> => {
    const deadline = Date.now() + waitMs;
    let states: string[] = [];
    while (Date.now() < deadline) {
      const running = slots.filter((slot) => slot.server?.running === true);
      states = await Promise.all(running.map((slot) => clusterState(slot.port)));
      if (states.length > 0 && states.every((state) => state === 'ok')) return;
      await sleep(50);
    }
    throw new FlowfleetError(
      'CLI_START_TIMEOUT',
      `the Redis Cluster did not reach cluster_state:ok within ${waitMs} ms (${states.join(', ')})`,
      { details: { what: 'redis cluster', timeoutMs: waitMs, states } },
    );
  };

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.all(slots.map((slot) => slot.server?.stop(5_000)));
      await rm(root, { recursive: true, force: true });
    })();
    return stopped;
  };

  try {
    const deadline = Date.now() + timeoutMs;
    await Promise.all(slots.map((slot) => startNode(slot, options, deadline)));
    await redisCli(
      [
        '--cluster',
        'create',
        ...slots.map((slot) => `${HOST}:${slot.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      Math.max(1_000, deadline - Date.now()),
    );
    await waitUntilOk(Math.max(1_000, deadline - Date.now()));
  } catch (error) {
    await stop();
    throw error;
  }

  const slotAt = (index: number): NodeSlot => {
    const slot = slots[index];
    if (slot === undefined) {
      throw new FlowfleetError('CLI_USAGE', `no cluster node ${index} (0..${slots.length - 1})`, {
        details: { index },
      });
    }
    return slot;
  };

  return {
    url: `redis://${HOST}:${slots[0]!.port}`,
    nodes: slots.map((slot) => ({
      host: HOST,
      port: slot.port,
      url: `redis://${HOST}:${slot.port}`,
      dir: slot.dir,
      get pid() {
        return slot.server?.running === true ? (slot.server.pid ?? -1) : -1;
      },
      get running() {
        return slot.server?.running === true;
      },
    })),
    stop,
    async killNode(index, signal = 'SIGKILL') {
      await slotAt(index).server?.stop(5_000, signal);
    },
    async restartNode(index) {
      if (stopped !== undefined) throw new Error('restartNode() after stop(): start a new cluster');
      const slot = slotAt(index);
      await slot.server?.stop(5_000, 'SIGKILL');
      await startNode(slot, options, Date.now() + timeoutMs);
      await waitUntilOk(timeoutMs);
    },
    waitUntilOk,
  };
}
