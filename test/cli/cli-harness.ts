// Shared helpers of the CLI tests: run `flowfleet` in-process (runCli with a captured CliIo) or as
// a child process (node + tsx + the source condition, exactly what `npm run flowfleet` runs),
// follow a child's output line by line, and check pids.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runCli } from '@flowfleet/cli';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** node flags that run a TypeScript entry from source (tsx loader + source condition). */
export function sourceNodeArgs(entry: string): string[] {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, '--conditions=@flowfleet/source', entry];
}

/** What an in-process run printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `flowfleet <argv>` in this process with `env` as its environment (stdout not a TTY). */
export async function runInProcess(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (text) => (out += text),
    err: (text) => (err += text),
    isTTY: false,
    columns: 120,
    env,
    signal: new AbortController().signal,
    forceSignal: new AbortController().signal,
  });
  return { code, out, err };
}

/** A `flowfleet` child process whose output is collected line by line. */
export interface CliChild {
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Resolves with the exit code (or 128 + signal number style: null code → -1). */
  readonly exited: Promise<number>;
  /** Resolves with the first stdout line matching `test`; rejects on exit or after `timeoutMs`. */
  waitForLine(test: (line: string) => boolean, timeoutMs: number): Promise<string>;
}

/** Spawns `command args` (default: the CLI from source) and collects its output. */
export function spawnCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; command?: string; commandArgs?: readonly string[] } = {},
): CliChild {
  const command = options.command ?? process.execPath;
  const prefix = options.commandArgs ?? sourceNodeArgs('apps/cli/src/main.ts');
  const child = spawn(command, [...prefix, ...args], {
    cwd: REPO_ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters = new Set<() => void>();
  const collect = (into: string[]) => {
    let partial = '';
    return (chunk: Buffer): void => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      into.push(...parts);
      for (const wake of waiters) wake();
    };
  };
  child.stdout.on('data', collect(stdout));
  child.stderr.on('data', collect(stderr));
  const exited = new Promise<number>((resolve) => {
    child.once('close', (code) => {
      resolve(code ?? -1);
      for (const wake of waiters) wake();
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLine(test, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching line within ${timeoutMs} ms:\n${stdout.join('\n')}\n${stderr.join('\n')}`,
            ),
          );
        }, timeoutMs);
        function check(): void {
          const found = stdout.find(test);
          if (found !== undefined || done) {
            clearTimeout(timer);
            waiters.delete(check);
            if (found !== undefined) resolve(found);
            else
              reject(
                new Error(
                  `exited before a matching line:\n${stdout.join('\n')}\n${stderr.join('\n')}`,
                ),
              );
          }
        }
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * True while `pid` runs: a zombie counts as gone (an orphan's new parent here, PID 1, may never
 * reap it, and a zombie holds nothing but its pid).
 */
export function isRunning(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** True while `pid` exists (a zombie too: see `isRunning`). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` until true or the deadline. */
export async function waitFor(
  check: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A TCP port that was free a moment ago (nothing listens there). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
