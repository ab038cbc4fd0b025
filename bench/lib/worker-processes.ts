// Worker processes for a bench coordinator, started as in production (`npm run worker`'s
// command line, configured by environment) and waited for until the coordinator lists them live.
import type { FlowfleetClient } from '@flowfleet/client';
import type { BenchCoordinator } from './bench-fleet.js';
import { BENCH_TOKENS } from './bench-fleet.js';
import { spawnTsx, type BenchChild } from './child-process.js';

/** How to start worker processes. */
export interface WorkerProcessOptions {
  readonly redisUrl: string;
  readonly coordinator: Pick<BenchCoordinator, 'url' | 'prefix'>;
  /** Who asks the coordinator whether they are live. */
  readonly client: FlowfleetClient;
  /** Default: the worker app, `apps/worker/src/main.ts`. */
  readonly script?: string;
  /** On top of the defaults (ort-cpu, concurrency 1, 1 intra-op thread). */
  readonly env?: Record<string, string>;
  readonly nodeArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

const WORKER_MAIN = 'apps/worker/src/main.ts';

/** The environment of one worker: the production settings the bench measures. */
function workerEnv(workerId: string, options: WorkerProcessOptions): Record<string, string> {
  return {
    REDIS_URL: options.redisUrl,
    FLOWFLEET_COORDINATOR_URL: options.coordinator.url,
    FLOWFLEET_WORKER_TOKEN: BENCH_TOKENS.worker,
    FLOWFLEET_PREFIX: options.coordinator.prefix,
    FLOWFLEET_WORKER_ID: workerId,
    FLOWFLEET_BACKEND: 'ort-cpu',
    FLOWFLEET_CONCURRENCY: '1',
    FLOWFLEET_ORT_INTRA_OP_THREADS: '1',
    FLOWFLEET_LOG_LEVEL: 'info',
    ...options.env,
  };
}

/**
 * Starts `count` worker processes named `<name>-<i>` and resolves once the coordinator lists all
 * of them alive; on a failure every one started is stopped.
 * @throws Error when one exits or they are not all live within `startTimeoutMs` (default 120 s)
 */
export async function startWorkerProcesses(
  name: string,
  count: number,
  options: WorkerProcessOptions,
): Promise<BenchChild[]> {
  const children = Array.from({ length: count }, (_, i) => {
    const workerId = `${name}-${i + 1}`;
    return spawnTsx(workerId, options.script ?? WORKER_MAIN, {
      env: workerEnv(workerId, options),
      ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
    });
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  try {
    for (;;) {
      const dead = children.find((c) => c.process.exitCode !== null || c.process.signalCode);
      if (dead !== undefined) throw new Error(`${dead.name} exited at start:\n${dead.output()}`);
      const fleet = await options.client.fleet();
      const live = new Set(fleet.workers.filter((w) => w.alive).map((w) => w.workerId));
      if (children.every((c) => live.has(c.name))) return children;
      if (Date.now() > deadline) throw new Error(`workers ${name}-* not live in time`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stopProcesses(children);
    throw error;
  }
}

/** SIGTERM (the worker drains and exits), in parallel; waits for every exit. */
export async function stopProcesses(children: readonly BenchChild[]): Promise<void> {
  await Promise.allSettled(children.map((child) => child.stop('SIGTERM')));
}
