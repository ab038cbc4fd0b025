// Child processes of the fleet bench, started as `npm run worker` starts the worker: node with
// tsx's loader and the @flowfleet/source condition (not the tsx CLI, whose grandchild a signal
// would orphan). An IPC channel is open for the bench's own child scripts.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT_TAIL_CHARS = 20_000;

/** A running child. */
export interface BenchChild {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** The tail of its stdout and stderr. */
  output(): string;
  /** Resolves with the exit code or signal once it has exited. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** Sends `signal` (SIGKILL after `graceMs`) and waits for the exit. Idempotent. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | NodeJS.Signals | null>;
}

/** How to start a child. */
export interface SpawnOptions {
  /** Added on top of this process's environment. */
  readonly env?: Record<string, string>;
  /** Node flags before the script (e.g. `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
  readonly args?: readonly string[];
}

/** Starts `script` (a path from the repo root) as a node + tsx child. */
export function spawnTsx(name: string, script: string, options: SpawnOptions = {}): BenchChild {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@flowfleet/source',
      '--import',
      'tsx',
      ...(options.nodeArgs ?? []),
      script,
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  // Last resort when the bench dies without its teardown.
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  let stopping: Promise<number | NodeJS.Signals | null> | undefined;
  return {
    name,
    process: child,
    pid: child.pid ?? -1,
    output: () => output,
    exited,
    stop(signal = 'SIGTERM', graceMs = 30_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return exited;
        child.kill(signal);
        const hard = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(hard);
        }
      })();
      return stopping;
    },
  };
}

/** Sends `message` over the child's IPC channel and resolves with its next reply. */
export function request<T>(child: BenchChild, message: unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (reply: unknown): void => {
      cleanup();
      const failure = (reply as { error?: string }).error;
      if (failure !== undefined) reject(new Error(`${child.name}: ${failure}`));
      else resolve(reply as T);
    };
    const onExit = (): void => {
      cleanup();
      reject(new Error(`${child.name} exited:\n${child.output()}`));
    };
    const cleanup = (): void => {
      child.process.off('message', onMessage);
      child.process.off('exit', onExit);
    };
    child.process.on('message', onMessage);
    child.process.once('exit', onExit);
    child.process.send(message as object);
  });
}
