// Child processes on test hosts (test/harness/netns.ts): spawned with `ip netns exec`, their
// output kept, their exit awaited, and a way to wait for a line they print.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestNetwork } from './netns.js';

/** The repository root (children run from it). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT_TAIL_CHARS = 40_000;

/** A process running on a test host. */
export interface HostProcess {
  readonly host: string;
  readonly process: ChildProcess;
  /** The tail of its stdout and stderr. */
  output(): string;
  /** Resolves with the exit code or signal once it has exited. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** Resolves once a line matching `pattern` was printed (polls the output until `timeoutMs`). */
  waitForOutput(pattern: RegExp, what: string, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (when still running) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** Starts `argv` on `host` with `env` on top of this process's environment. */
export function spawnOnHost(
  network: TestNetwork,
  host: string,
  argv: readonly string[],
  env: Record<string, string> = {},
): HostProcess {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('empty argv');
  const child = network.spawn(host, command, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  return {
    host,
    process: child,
    output: () => output,
    exited,
    async waitForOutput(pattern, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output);
        if (match !== null) return match[0];
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${host}: exited before ${what}:\n${output}`);
        }
        if (Date.now() > deadline)
          throw new Error(`${host}: no ${what} in ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** `node` with tsx and the @flowfleet/source condition (how `npm run worker` runs a TS entry). */
export function tsNode(entry: string): string[] {
  return [process.execPath, '--conditions=@flowfleet/source', '--import', 'tsx', entry];
}

/** Where a relay listens and what it adds. */
export interface RelayOptions {
  /** A Unix socket path (reachable from the root namespace) or `host:port` on the relay's host. */
  readonly listen: string;
  readonly target: string;
  readonly port: number;
  /** Each chunk is held this long ± `jitterMs` in each direction (default 0: a plain relay). */
  readonly delayMs?: number;
  readonly jitterMs?: number;
  /** Relay without delay until {@link delayRelay} is called (default false: delay at once). */
  readonly delayLater?: boolean;
}

/** Turns on the delay of a relay started with `delayLater`; resolves once it is on. */
export async function delayRelay(relay: HostProcess): Promise<void> {
  const from = relay.output().length;
  relay.process.kill('SIGUSR2');
  const deadline = Date.now() + 5_000;
  while (!relay.output().slice(from).includes('delaying')) {
    if (Date.now() > deadline)
      throw new Error(`the relay did not start delaying:\n${relay.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts test/harness/tcp-relay.ts on `host`: connections to `listen` go on to `target:port`
 * from that host, over its link (cut it and they stall). A test process in the root namespace
 * reaches the test network through a Unix socket relay on the host it plays.
 */
export async function startRelay(
  network: TestNetwork,
  host: string,
  options: RelayOptions,
): Promise<HostProcess> {
  const relay = spawnOnHost(network, host, [
    ...tsNode('test/harness/tcp-relay.ts'),
    options.listen,
    options.target,
    String(options.port),
    String(options.delayMs ?? 0),
    String(options.jitterMs ?? 0),
    options.delayLater === true ? 'later' : 'now',
  ]);
  await relay.waitForOutput(/relaying/, 'the relay to listen', 20_000);
  return relay;
}
