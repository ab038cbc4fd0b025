import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** How a child service is started. */
export interface ServiceSpawnOptions {
  /** Short name used as the log prefix: `redis`, `coord`, `w1`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /**
   * Give the child a stdin pipe that is never written: it closes when this process dies, however
   * it dies, so a child started with `FLOWFLEET_EXIT_WITH_PARENT=1` shuts down then. Default false.
   */
  readonly stdinPipe?: boolean;
  /** Called with every output line (stdout and stderr), without the newline. */
  readonly onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/** How a child ended. */
export interface ServiceExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all (e.g. ENOENT). */
  readonly error?: Error;
}

const OUTPUT_TAIL_CHARS = 4_000;

/**
 * One child process of the local fleet. It is spawned in its own process group (`detached`), so
 * a Ctrl-C in the terminal reaches only the CLI, which then stops the children in order
 * (workers, coordinator, Redis) instead of all at once.
 */
export class ServiceProcess {
  readonly name: string;
  /** Resolves once the process has exited (or failed to spawn); never rejects. */
  readonly exited: Promise<ServiceExit>;
  readonly #child: ChildProcess;
  #tail = '';
  #exit: ServiceExit | undefined;
  #stopping: Promise<ServiceExit> | undefined;

  private constructor(options: ServiceSpawnOptions) {
    this.name = options.name;
    const child = spawn(options.command, [...options.args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: [options.stdinPipe === true ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.#child = child;
    // A child that exits first leaves a broken pipe behind: nothing is ever written to it.
    child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('error', (error) => {
        if (child.pid === undefined) {
          this.#exit = { code: null, signal: null, error };
          resolve(this.#exit);
        }
      });
      child.once('close', (code, signal) => {
        // After a spawn error node still emits 'close' (code -2): keep the error.
        this.#exit ??= { code, signal };
        resolve(this.#exit);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream];
      if (readable === null) continue;
      createInterface({ input: readable, crlfDelay: Infinity }).on('line', (text) => {
        this.#tail = (this.#tail + text + '\n').slice(-OUTPUT_TAIL_CHARS);
        options.onLine?.(text, stream);
      });
    }
  }

  /** Spawns the child (returns at once; a spawn failure shows up in `exited`). */
  static spawn(options: ServiceSpawnOptions): ServiceProcess {
    return new ServiceProcess(options);
  }

  /** The child's pid (undefined when it could not be spawned). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.#exit === undefined;
  }

  /** How it ended, once it has. */
  get exit(): ServiceExit | undefined {
    return this.#exit;
  }

  /** The last few KB of its output, for error messages. */
  get outputTail(): string {
    return this.#tail;
  }

  /** Sends a signal if the process is still running. */
  signal(signal: NodeJS.Signals): void {
    if (this.running && this.#child.pid !== undefined) this.#child.kill(signal);
  }

  /**
   * Sends `signal` (default SIGTERM) and waits for the exit; SIGKILL after `timeoutMs`.
   * Idempotent: a second call waits for the first.
   */
  stop(timeoutMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<ServiceExit> {
    this.#stopping ??= (async () => {
      if (!this.running) return this.exited;
      this.signal(signal);
      const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.#stopping;
  }

  /** SIGKILL now (the second Ctrl-C). */
  kill(): void {
    this.signal('SIGKILL');
  }
}

/** `exit code 1`, `signal SIGKILL` or the spawn error, for messages. */
export function describeExit(exit: ServiceExit): string {
  if (exit.error !== undefined) return `could not start: ${exit.error.message}`;
  if (exit.signal !== null) return `killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? '?'}`;
}
