// Runs the worker app as a child process exactly as `npm run worker` does (node with tsx's loader
// and the @flowfleet/source condition), so a test can SIGKILL it mid-rollout.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT_TAIL_CHARS = 20_000;

/**
 * How long a worker child may take to register: it loads the app through tsx, which on a machine
 * busy with other work takes tens of seconds.
 */
export const STARTUP_TIMEOUT_MS = 120_000;

/** A worker child process. */
export interface ChildWorker {
  readonly workerId: string;
  readonly process: ChildProcess;
  /** The tail of its stdout and stderr (pino JSON lines). */
  output(): string;
  /** Resolves with the exit code or signal once it has exited. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** Sends `signal` and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** Starts `apps/worker/src/main.ts` with `env` on top of this process's environment. */
export function spawnWorker(workerId: string, env: Record<string, string>): ChildWorker {
  // `node --import tsx` rather than the tsx CLI: the CLI runs the script in a grandchild, which a
  // SIGKILL of the CLI would orphan.
  const child = spawn(
    process.execPath,
    ['--conditions=@flowfleet/source', '--import', 'tsx', 'apps/worker/src/main.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, FLOWFLEET_WORKER_ID: workerId, FLOWFLEET_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
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
  return {
    workerId,
    process: child,
    output: () => output,
    exited,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
