import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { freePort } from '../local-fleet/free-port.js';
import type { ServiceProcess } from '../local-fleet/service-process.js';
import { redisCli } from './redis-cluster.js';
import { startRedisChild } from './redis-child.js';

/** How to start a local Sentinel-monitored master with replicas. */
export interface RedisSentinelOptions {
  /** Replicas of the master; default 1. */
  readonly replicas?: number;
  /** Sentinels; default 3 (quorum 2). */
  readonly sentinels?: number;
  /** The master group's name; default `flowfleet`. */
  readonly masterName?: string;
  /** `sentinel down-after-milliseconds`: how long a silent master takes to be down. Default 1000. */
  readonly downAfterMs?: number;
  /** `sentinel failover-timeout`. Default 3000. */
  readonly failoverTimeoutMs?: number;
  /** Every data node's policy; default `noeviction` (the only one the coordinator accepts). */
  readonly maxmemoryPolicy?: string;
  /** Allow `DEBUG` from loopback on the data nodes (tests that stall a replica). Default false. */
  readonly enableDebugCommand?: boolean;
  /** Deadline for the whole start-up (PINGs, replication, sentinels knowing each other). Default 20 s. */
  readonly startTimeoutMs?: number;
  /** The server binary (default `redis-server`; sentinels run it with `--sentinel`). */
  readonly command?: string;
}

/** One redis-server of the set (a data node or a sentinel). */
export interface RedisSentinelMember {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (a direct connection, for inspection). */
  readonly url: string;
  /** True unless killed. */
  readonly running: boolean;
}

/** A running local master + replicas + sentinels on free ports of 127.0.0.1. */
export interface RedisSentinelSet {
  /**
   * `redis://127.0.0.1:<s1>,127.0.0.1:<s2>,…/<masterName>`: what REDIS_URL is in
   * FLOWFLEET_REDIS_MODE=sentinel.
   */
  readonly url: string;
  readonly masterName: string;
  /** The data nodes; node 0 is the first master, the rest its replicas. */
  readonly nodes: readonly RedisSentinelMember[];
  readonly sentinels: readonly RedisSentinelMember[];
  /** The master's port as a majority of the running sentinels name it now (undefined if none agree). */
  masterPort(): Promise<number | undefined>;
  /** Sends `signal` (default SIGKILL) to data node `index` and waits for it to exit. */
  killNode(index: number, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Resolves with the new master's port once the sentinels agree on a master other than
   * `formerPort` and that node answers `role:master` (polls until `timeoutMs`, default 20 s).
   */
  waitForFailover(formerPort: number, timeoutMs?: number): Promise<number>;
  /** Stops every process (SIGTERM, SIGKILL after 5 s) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

interface Member {
  readonly port: number;
  readonly dir: string;
  server: ServiceProcess | undefined;
}

function dataArgs(member: Member, options: RedisSentinelOptions, masterPort?: number): string[] {
  return [
    '--port',
    String(member.port),
    '--bind',
    HOST,
    '--dir',
    member.dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--enable-debug-command',
    options.enableDebugCommand === true ? 'local' : 'no',
    '--daemonize',
    'no',
    '--logfile',
    '',
    ...(masterPort === undefined ? [] : ['--replicaof', HOST, String(masterPort)]),
  ];
}

function sentinelConf(
  port: number,
  dir: string,
  name: string,
  master: number,
  o: RedisSentinelOptions,
): string {
  return [
    `port ${port}`,
    `bind ${HOST}`,
    `dir ${dir}`,
    'daemonize no',
    'logfile ""',
    `sentinel monitor ${name} ${HOST} ${master} ${Math.floor((o.sentinels ?? 3) / 2) + 1}`,
    `sentinel down-after-milliseconds ${name} ${o.downAfterMs ?? 1_000}`,
    `sentinel failover-timeout ${name} ${o.failoverTimeoutMs ?? 3_000}`,
    `sentinel parallel-syncs ${name} 1`,
    '',
  ].join('\n');
}

/** Every line of a redis-cli reply (one value per line), or [] when the command failed. */
async function ask(port: number, args: readonly string[]): Promise<string[]> {
  try {
    const out = await redisCli(['-h', HOST, '-p', String(port), ...args], 1_000);
    return out
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  } catch {
    return [];
  }
}

/**
 * Starts a real Sentinel set: a master, `replicas` (default 1) `--replicaof` replicas and
 * `sentinels` (default 3) `redis-server <conf> --sentinel` processes on free ports, with short
 * `down-after-milliseconds` / `failover-timeout`; resolves once every replica is in sync and every
 * sentinel knows the master, its replicas and the other sentinels (so a failover can be
 * authorised). Everything lives in one temp dir that `stop()` removes, also when start-up fails.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE, CLI_CHILD_FAILED, CLI_START_TIMEOUT
 */
export async function startRedisSentinel(
  options: RedisSentinelOptions = {},
): Promise<RedisSentinelSet> {
  const replicas = options.replicas ?? 1;
  const sentinelCount = options.sentinels ?? 3;
  const name = options.masterName ?? 'flowfleet';
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const root = await mkdtemp(join(tmpdir(), 'flowfleet-redis-sentinel-'));
  const ports = new Set<number>();
  while (ports.size < 1 + replicas + sentinelCount) ports.add(await freePort(HOST));
  const [first, ...others] = [...ports];
  const member = async (port: number, kind: string): Promise<Member> => {
    const dir = join(root, `${kind}-${port}`);
    await mkdir(dir);
    return { port, dir, server: undefined };
  };
  const data = [await member(first!, 'node')];
  for (const port of others.slice(0, replicas)) data.push(await member(port, 'node'));
  const sentinels: Member[] = [];
  for (const port of others.slice(replicas)) sentinels.push(await member(port, 'sentinel'));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.all([...sentinels, ...data].map((m) => m.server?.stop(5_000)));
      await rm(root, { recursive: true, force: true });
    })();
    return stopped;
  };
  const command = options.command === undefined ? {} : { command: options.command };
  const running = (m: Member): boolean => m.server?.running === true;

  const masterPort = async (): Promise<number | undefined> => {
    const votes = new Map<number, number>();
    const live = sentinels.filter(running);
    for (const s of live) {
      const [, port] = await ask(s.port, ['SENTINEL', 'get-master-addr-by-name', name]);
      if (port !== undefined) votes.set(Number(port), (votes.get(Number(port)) ?? 0) + 1);
    }
    for (const [port, count] of votes) if (count * 2 > live.length) return port;
    return undefined;
  };
  const isMaster = async (port: number): Promise<boolean> =>
    (await ask(port, ['ROLE']))[0] === 'master';

  try {
    const deadline = Date.now() + timeoutMs;
    data[0]!.server = await startRedisChild(
      { what: 'master', host: HOST, port: first!, args: dataArgs(data[0]!, options), ...command },
      deadline,
    );
    await Promise.all(
      data.slice(1).map(async (replica) => {
        replica.server = await startRedisChild(
          {
            what: 'replica',
            host: HOST,
            port: replica.port,
            args: dataArgs(replica, options, first),
            ...command,
          },
          deadline,
        );
      }),
    );
    await Promise.all(
      sentinels.map(async (s) => {
        const conf = join(s.dir, 'sentinel.conf');
        await writeFile(conf, sentinelConf(s.port, s.dir, name, first!, options));
        s.server = await startRedisChild(
          { what: 'sentinel', host: HOST, port: s.port, args: [conf, '--sentinel'], ...command },
          deadline,
        );
      }),
    );
    // Ready for a failover: replicas in sync, every sentinel sees them and its peers.
    let state = '';
    for (;;) {
      const synced = await Promise.all(
        data
          .slice(1)
          .map(async (r) =>
            (await ask(r.port, ['INFO', 'replication'])).includes('master_link_status:up'),
          ),
      );
      const seen = await Promise.all(
        sentinels.map(async (s) => {
          const info = (await ask(s.port, ['SENTINEL', 'master', name])).join(' ');
          const peers = /num-other-sentinels (\d+)/.exec(info)?.[1];
          const slaves = /num-slaves (\d+)/.exec(info)?.[1];
          return Number(peers) === sentinelCount - 1 && Number(slaves) === replicas;
        }),
      );
      state = `replicas in sync ${synced.filter(Boolean).length}/${replicas}, sentinels ready ${seen.filter(Boolean).length}/${sentinelCount}`;
      if (synced.every(Boolean) && seen.every(Boolean)) break;
      if (Date.now() > deadline) {
        throw new FlowfleetError(
          'CLI_START_TIMEOUT',
          `the Sentinel set was not ready in time (${state})`,
          {
            details: { what: 'redis sentinel', timeoutMs, state },
          },
        );
      }
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }

  const view = (m: Member): RedisSentinelMember => ({
    host: HOST,
    port: m.port,
    url: `redis://${HOST}:${m.port}`,
    get running() {
      return running(m);
    },
  });
  return {
    url: `redis://${sentinels.map((s) => `${HOST}:${s.port}`).join(',')}/${name}`,
    masterName: name,
    nodes: data.map(view),
    sentinels: sentinels.map(view),
    masterPort,
    async killNode(index, signal = 'SIGKILL') {
      const node = data[index];
      if (node === undefined) {
        throw new FlowfleetError('CLI_USAGE', `no data node ${index} (0..${data.length - 1})`, {
          details: { index },
        });
      }
      await node.server?.stop(5_000, signal);
    },
    async waitForFailover(formerPort, waitMs = 20_000) {
      const deadline = Date.now() + waitMs;
      let seen: number | undefined;
      for (;;) {
        seen = await masterPort();
        if (seen !== undefined && seen !== formerPort && (await isMaster(seen))) return seen;
        if (Date.now() > deadline) {
          throw new FlowfleetError(
            'CLI_START_TIMEOUT',
            `the sentinels did not promote a new master within ${waitMs} ms (they name ${seen ?? 'none'})`,
            { details: { what: 'sentinel failover', timeoutMs: waitMs } },
          );
        }
        await sleep(50);
      }
    },
    stop,
  };
}
