// bench:scale's simulated fleet and its coordinator, as child processes: sim-worker processes
// (bench/lib/sim-worker-main.ts, many workers each) added in steps so a phase's fleet is the
// previous phase's plus new workers, and the coordinator process (bench/lib/coordinator-main.ts).
import { readFileSync } from 'node:fs';
import type { RedisMode } from '@flowfleet/redis';
import { request, spawnTsx, type BenchChild } from './child-process.js';
import { processCpuMs } from './process-cpu.js';

/** The coordinator child. */
export interface CoordinatorProcess {
  readonly child: BenchChild;
  readonly url: string;
  /** RSS (from /proc) and V8 heap of the coordinator process, MB. */
  memory(): Promise<{ rssMb: number; heapUsedMb: number }>;
  cpuMs(): number;
}

/** Where the coordinator runs. */
export interface CoordinatorProcessOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly blobDir: string;
  readonly tokens: Readonly<Record<string, string>>;
  readonly noopCard: string;
  readonly env?: Record<string, string>;
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Starts the coordinator process and resolves once it listens.
 * @throws Error when it exits first
 */
export async function startCoordinatorProcess(
  options: CoordinatorProcessOptions,
): Promise<CoordinatorProcess> {
  const child = spawnTsx('coordinator', 'bench/lib/coordinator-main.ts', {
    env: {
      REDIS_URL: options.redisUrl,
      FLOWFLEET_PREFIX: options.prefix,
      FLOWFLEET_BLOB_DIR: options.blobDir,
      BENCH_TOKENS_JSON: JSON.stringify(options.tokens),
      BENCH_NOOP_CARD: options.noopCard,
      ...options.env,
    },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.process.once('message', (message: { url?: string }) => {
      if (message.url === undefined) reject(new Error('coordinator: unexpected first message'));
      else resolve(message.url);
    });
    void child.exited.then(() => reject(new Error(`coordinator exited:\n${child.output()}`)));
  });
  return {
    child,
    url,
    async memory() {
      const { memory } = await request<{ memory: NodeJS.MemoryUsage }>(child, { op: 'memory' });
      return { rssMb: rssMb(child.pid), heapUsedMb: memory.heapUsed / 2 ** 20 };
    },
    cpuMs: () => processCpuMs(child.pid),
  };
}

/** The simulated workers started so far. */
export class SimFleet {
  readonly #children: BenchChild[] = [];
  readonly #options: SimFleetOptions;
  #size = 0;

  constructor(options: SimFleetOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#size;
  }

  get pids(): number[] {
    return this.#children.map((child) => child.pid);
  }

  /**
   * Grows the fleet to `target` workers (new ones spread over `processes` new children) and
   * resolves once every worker has registered.
   * @throws Error when a child exits, a registration fails, or they are not in within the timeout
   */
  async growTo(target: number): Promise<void> {
    const add = target - this.#size;
    if (add <= 0) return;
    const { processes } = this.#options;
    const fresh: BenchChild[] = [];
    for (let p = 0; p < processes; p += 1) {
      const count = Math.floor(add / processes) + (p < add % processes ? 1 : 0);
      if (count === 0) continue;
      const first = this.#size;
      this.#size += count;
      fresh.push(
        spawnTsx(`sim-${first}`, 'bench/lib/sim-worker-main.ts', {
          env: {
            REDIS_URL: this.#options.redisUrl,
            FLOWFLEET_PREFIX: this.#options.prefix,
            BENCH_SIM_FIRST: String(first),
            BENCH_SIM_COUNT: String(count),
            BENCH_SIM_RAMP_MS: String(this.#options.rampMs),
            FLOWFLEET_REDIS_MODE: this.#options.mode,
          },
          // 2,500 ioredis clients and their manifests per process need more than the default heap.
          nodeArgs: ['--max-old-space-size=2048'],
        }),
      );
    }
    this.#children.push(...fresh);
    const deadline = Date.now() + this.#options.startTimeoutMs;
    for (;;) {
      const statuses = await Promise.all(
        fresh.map((child) =>
          request<{ registered: number; failed: number }>(child, { op: 'status' }),
        ),
      );
      const failed = statuses.reduce((sum, s) => sum + s.failed, 0);
      if (failed > 0) {
        const tail = fresh.map((child) => child.output().slice(-600)).join('\n');
        throw new Error(`${failed} simulated workers failed to register:\n${tail}`);
      }
      const registered = statuses.reduce((sum, s) => sum + s.registered, 0);
      if (registered === add) return;
      if (Date.now() > deadline) throw new Error(`only ${registered}/${add} registered in time`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** CPU ms of every sim process so far. */
  cpuMs(): number {
    return this.#children.reduce((sum, child) => sum + processCpuMs(child.pid), 0);
  }

  /** SIGTERM to every child (each deletes its heartbeats and quits), in parallel. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.#children.map((child) => child.stop('SIGTERM', 20_000)));
  }
}

/** How to run the simulated workers. */
export interface SimFleetOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly mode: RedisMode;
  /** Children added per growth step. */
  readonly processes: number;
  /** Each child spreads its registrations over this long. */
  readonly rampMs: number;
  readonly startTimeoutMs: number;
}
