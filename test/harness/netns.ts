// Test hosts on a real network: one Linux network namespace per host, each with a veth pair to a
// bridge in a hub namespace, an address of its own in a 10.x/24 picked per network, and links the
// test can cut, restore and make lossy. Needs root (CI runs as root), iproute2 and nftables.
// Loss is nftables' random drop on the host's interface (real packets lost, so TCP retransmits):
// this machine's kernel has no netem (CONFIG_NET_SCH_NETEM is not set: `tc qdisc … netem` answers
// "Specified qdisc kind is unknown"), so delay and jitter come from a delaying relay on the path
// (test/harness/tcp-relay.ts, started with netns-process.ts's startRelay). Only
// addresses inside the namespaces made here are ever used; nothing is configured in the root
// namespace. Every network removes its namespaces on destroy(), at process exit, and (for ones a
// dead test process left behind) when the next network is created.
import {
  execFile,
  execFileSync,
  spawn,
  type ChildProcess,
  type SpawnOptions,
} from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every namespace made here starts with this (sweeps look for it). */
export const NETNS_PREFIX = 'fft-';
const HUB = 'hub';
const BRIDGE = 'br0';
const HOST_DEVICE = 'eth0';

/** One test host: a namespace with one interface on the test network. */
export interface NetHost {
  readonly name: string;
  /** The namespace's name (`ip netns exec <ns> …`). */
  readonly ns: string;
  /** Its IPv4 address on the test network. */
  readonly address: string;
}

/** A set of test hosts on one bridge. */
export interface TestNetwork {
  readonly hosts: readonly NetHost[];
  /** The host called `name`. @throws Error for an unknown name */
  host(name: string): NetHost;
  /** Spawns `command` inside `host`'s namespace (the pid is the command's own: ip execs it). */
  spawn(
    host: string,
    command: string,
    args: readonly string[],
    options?: SpawnOptions,
  ): ChildProcess;
  /** Runs `command` in `host`'s namespace and resolves with its stdout. */
  exec(host: string, command: string, args: readonly string[]): Promise<string>;
  /** Takes `host`'s link down: nothing gets to or from it (connections stall, none resets). */
  cut(host: string): Promise<void>;
  /** Brings `host`'s link back up. */
  restore(host: string): Promise<void>;
  /** Drops every packet between `a` and `b` only (blackhole routes on both sides). */
  cutBetween(a: string, b: string): Promise<void>;
  /** Drops what `from` sends to `to` only (what `to` sends still arrives: an answer gets lost). */
  cutFrom(from: string, to: string): Promise<void>;
  /** Undoes `cutFrom(from, to)`. */
  restoreFrom(from: string, to: string): Promise<void>;
  /** Undoes `cutBetween(a, b)`. */
  restoreBetween(a: string, b: string): Promise<void>;
  /** Drops `percent` % of the packets `host` sends and of those it receives, at random. */
  setLoss(host: string, percent: number): Promise<void>;
  /** Undoes `setLoss(host, …)`. */
  clearLoss(host: string): Promise<void>;
  /** Deletes every namespace of this network (its links go with them). Idempotent. */
  destroy(): Promise<void>;
}

const live = new Set<string>();
let exitHookInstalled = false;

function deleteNamespaceSync(ns: string): void {
  try {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const ns of live) deleteNamespaceSync(ns);
  });
}

async function ip(args: readonly string[]): Promise<string> {
  try {
    return (await run('ip', args)).stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`ip ${args.join(' ')} failed: ${stderr.trim() || (error as Error).message}`, {
      cause: error,
    });
  }
}

async function nft(ns: string, args: readonly string[]): Promise<void> {
  try {
    await run('ip', ['netns', 'exec', ns, 'nft', ...args]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? (error as Error).message;
    throw new Error(`nft ${args.join(' ')} in ${ns} failed: ${stderr.trim()}`, { cause: error });
  }
}

const LOSS_TABLE = 'fftloss';

/** The pid a namespace name of ours carries (`fft-<pid>-<tag>-<host>`), if any. */
export function ownerPidOf(ns: string): number | undefined {
  const match = /^fft-(\d+)-/.exec(ns);
  return match === null ? undefined : Number(match[1]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Namespaces that exist now (names only). */
export async function listNamespaces(): Promise<string[]> {
  const out = await ip(['netns', 'list']);
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((name) => name.length > 0);
}

/** Deletes namespaces of ours whose test process is gone; answers how many. */
export async function sweepStaleNamespaces(): Promise<number> {
  let swept = 0;
  for (const ns of await listNamespaces()) {
    const pid = ownerPidOf(ns);
    if (!ns.startsWith(NETNS_PREFIX) || pid === undefined || isAlive(pid)) continue;
    await ip(['netns', 'del', ns]).catch(() => undefined);
    swept += 1;
  }
  return swept;
}

/**
 * Creates a hub namespace with a bridge and one namespace per name in `hostNames`, each joined
 * to the bridge by a veth pair and given an address in a fresh 10.x.y.0/24 (loopback up too).
 * Host names are short lowercase words (`redis`, `coord`, `w1`).
 * @throws Error when `ip netns add` fails (not root, no iproute2)
 */
export async function createTestNetwork(hostNames: readonly string[]): Promise<TestNetwork> {
  for (const name of hostNames) {
    if (!/^[a-z][a-z0-9]{0,11}$/.test(name) || name === HUB) {
      throw new Error(`bad host name ${JSON.stringify(name)}`);
    }
  }
  installExitHook();
  await sweepStaleNamespaces();
  const tag = randomBytes(3).toString('hex');
  const nsOf = (name: string): string => `${NETNS_PREFIX}${process.pid}-${tag}-${name}`;
  const subnet = `10.${randomInt(100, 200)}.${randomInt(0, 256)}`;
  const hub = nsOf(HUB);
  const hosts: NetHost[] = hostNames.map((name, i) => ({
    name,
    ns: nsOf(name),
    address: `${subnet}.${i + 10}`,
  }));
  const peerOf = new Map(hosts.map((host, i) => [host.name, `p${i}`]));
  const created: string[] = [];
  const destroy = async (): Promise<void> => {
    const names = created.splice(0);
    await Promise.all(
      names.map(async (ns) => {
        await ip(['netns', 'del', ns]).catch(() => undefined);
        live.delete(ns);
      }),
    );
  };
  try {
    for (const ns of [hub, ...hosts.map((host) => host.ns)]) {
      await ip(['netns', 'add', ns]);
      created.push(ns);
      live.add(ns);
      await ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    }
    await ip(['-n', hub, 'link', 'add', BRIDGE, 'type', 'bridge']);
    await ip(['-n', hub, 'link', 'set', BRIDGE, 'up']);
    for (const host of hosts) {
      const peer = peerOf.get(host.name) ?? '';
      await ip([
        '-n',
        hub,
        'link',
        'add',
        peer,
        'type',
        'veth',
        'peer',
        'name',
        HOST_DEVICE,
        'netns',
        host.ns,
      ]);
      await ip(['-n', hub, 'link', 'set', peer, 'master', BRIDGE, 'up']);
      await ip(['-n', host.ns, 'addr', 'add', `${host.address}/24`, 'dev', HOST_DEVICE]);
      await ip(['-n', host.ns, 'link', 'set', HOST_DEVICE, 'up']);
    }
  } catch (error) {
    await destroy();
    throw error;
  }

  const host = (name: string): NetHost => {
    const found = hosts.find((each) => each.name === name);
    if (found === undefined) throw new Error(`no host ${name} on this test network`);
    return found;
  };
  const peer = (name: string): string => {
    host(name);
    return peerOf.get(name) ?? '';
  };
  const cutFrom = async (from: string, to: string): Promise<void> => {
    await ip(['-n', host(from).ns, 'route', 'add', 'blackhole', `${host(to).address}/32`]);
  };
  const restoreFrom = async (from: string, to: string): Promise<void> => {
    await ip(['-n', host(from).ns, 'route', 'del', 'blackhole', `${host(to).address}/32`]);
  };
  return {
    hosts,
    host,
    spawn(name, command, args, options = {}) {
      return spawn('ip', ['netns', 'exec', host(name).ns, command, ...args], options);
    },
    async exec(name, command, args) {
      return (await run('ip', ['netns', 'exec', host(name).ns, command, ...args])).stdout;
    },
    async cut(name) {
      await ip(['-n', hub, 'link', 'set', peer(name), 'down']);
    },
    async restore(name) {
      await ip(['-n', hub, 'link', 'set', peer(name), 'up']);
    },
    cutBetween: async (a, b) => {
      await cutFrom(a, b);
      await cutFrom(b, a);
    },
    restoreBetween: async (a, b) => {
      await restoreFrom(a, b);
      await restoreFrom(b, a);
    },
    cutFrom,
    restoreFrom,
    async setLoss(name, percent) {
      if (!(percent > 0 && percent < 100)) throw new Error(`loss ${percent} % is not in (0, 100)`);
      const { ns } = host(name);
      // Per mille, drawn per packet (nft's numgen random).
      const below = String(Math.round(percent * 10));
      await nft(ns, ['add', 'table', 'inet', LOSS_TABLE]);
      for (const [chain, hook, match] of [
        ['out', 'output', 'oifname'],
        ['in', 'input', 'iifname'],
      ] as const) {
        await nft(ns, [
          'add',
          'chain',
          'inet',
          LOSS_TABLE,
          chain,
          `{ type filter hook ${hook} priority 0 ; }`,
        ]);
        await nft(ns, [
          'add',
          'rule',
          'inet',
          LOSS_TABLE,
          chain,
          match,
          HOST_DEVICE,
          'numgen',
          'random',
          'mod',
          '1000',
          'lt',
          below,
          'drop',
        ]);
      }
    },
    async clearLoss(name) {
      await nft(host(name).ns, ['delete', 'table', 'inet', LOSS_TABLE]);
    },
    destroy,
  };
}
