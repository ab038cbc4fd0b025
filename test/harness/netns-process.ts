// Child processes on test hosts (test/harness/netns.ts): spawned with `ip netns exec`, their
// output kept, their exit awaited, and a way to wait for a line they print.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestNetwork } from './netns.js';

/** The repository root (children run from it). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** How much of a child's output `output()` shows (it goes into error messages). */
const OUTPUT_TAIL_CHARS = 40_000;
/**
 * How much of a child's output is kept for `outputSince`, at least: far more than a test's window
 * prints (a cut worker's 100 failed progress reports, each with a stack, are ~130 kB). Trimmed
 * when twice that, so a chunk costs no copy of what is kept.
 */
const KEPT_OUTPUT_CHARS = 4_000_000;

/** A process running on a test host. */
export interface HostProcess {
  readonly host: string;
  readonly process: ChildProcess;
  /** The tail of its stdout and stderr. */
  output(): string;
  /**
   * How many characters it has printed so far: a mark for `outputSince` (not `output().length`,
   * which stops growing once the tail is full).
   */
  printed(): number;
  /**
   * What it printed after `mark` (a `printed()` answer).
   * @throws Error when that output is no longer all kept (more than KEPT_OUTPUT_CHARS since)
   */
  outputSince(mark: number): string;
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
  // `kept` holds at least the last KEPT_OUTPUT_CHARS of the output; `printed` counts all of it.
  let kept = '';
  let printed = 0;
  const keep = (chunk: Buffer): void => {
    const text = chunk.toString();
    printed += text.length;
    kept += text;
    if (kept.length > 2 * KEPT_OUTPUT_CHARS) kept = kept.slice(-KEPT_OUTPUT_CHARS);
  };
  const output = (): string => kept.slice(-OUTPUT_TAIL_CHARS);
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  return {
    host,
    process: child,
    output,
    printed: () => printed,
    outputSince(mark) {
      const start = kept.length - (printed - mark);
      if (start < 0) {
        throw new Error(
          `${host}: ${printed - mark} characters printed since the mark, only the last ${kept.length} are kept`,
        );
      }
      return kept.slice(start);
    },
    exited,
    async waitForOutput(pattern, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output());
        if (match !== null) return match[0];
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${host}: exited before ${what}:\n${output()}`);
        }
        if (Date.now() > deadline)
          throw new Error(`${host}: no ${what} in ${timeoutMs} ms:\n${output()}`);
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
  const from = relay.printed();
  relay.process.kill('SIGUSR2');
  const deadline = Date.now() + 5_000;
  while (!relay.outputSince(from).includes('delaying')) {
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
