// The bench's side of the raw-loop process (bench/lib/raw-loop-process.ts): start it with a
// workload, run rollouts in it, stop it.
import { createHash } from 'node:crypto';
import { request, spawnTsx, type BenchChild } from './child-process.js';

/** What argv[2] carries. */
export interface RawProcessWorkload {
  readonly model: string;
  readonly prompt: string;
  readonly seeds: readonly number[];
  readonly steps: number;
  readonly shift: number;
  readonly guidanceScale: number;
  readonly noiseLevel: number;
  readonly shape: { readonly frames: number; readonly height: number; readonly width: number };
  /** The `initWeights` seed of the weights (the worker's version 0 uses 0). */
  readonly weightsSeed: number;
  readonly intraOpThreads: number;
}

/** One timed rollout. */
export interface RawSample {
  readonly ms: number;
  /** Inside `session.run` (text encoder and DiT). */
  readonly runMs: number;
}

/** The answer to `{op: 'run'}`. */
export interface RawRunReply {
  readonly samples: readonly RawSample[];
  /** CPU this process used over the run (µs, all threads). */
  readonly cpuUs: number;
  /** The DiT forwards of the run, [start, end] in µs of CLOCK_MONOTONIC. */
  readonly ditRuns: readonly (readonly [number, number])[];
  readonly latentsSha256: string;
  readonly logProbsSha256: string;
}

/** The sha256 of a typed array's bytes. */
export function bytesSha256(array: Float32Array | Float64Array): string {
  return createHash('sha256')
    .update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength))
    .digest('hex');
}

/** A started raw-loop process. */
export interface RawLoop {
  readonly child: BenchChild;
  run(rollouts: number): Promise<RawRunReply>;
  close(): Promise<void>;
}

/**
 * Starts a raw-loop process and resolves once its sessions are open and warm.
 * @throws Error when it exits before that
 */
export async function startRawLoop(
  name: string,
  workload: RawProcessWorkload,
  nodeArgs: readonly string[] = [],
): Promise<RawLoop> {
  const child = spawnTsx(name, 'bench/lib/raw-loop-process.ts', {
    args: [JSON.stringify(workload)],
    nodeArgs,
  });
  await new Promise<void>((resolve, reject) => {
    child.process.once('message', () => resolve());
    void child.exited.then(() => reject(new Error(`${name} exited at start:\n${child.output()}`)));
  });
  return {
    child,
    run: (rollouts) => request<RawRunReply>(child, { op: 'run', rollouts }),
    async close() {
      // Asked to exit, it releases its sessions and exits by itself (a --cpu-prof profile is
      // written then); SIGTERM only if it does not.
      if (child.process.connected) child.process.send({ op: 'close' });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((resolve) => (timer = setTimeout(resolve, 10_000)));
      await Promise.race([child.exited, late]);
      clearTimeout(timer);
      await child.stop('SIGTERM', 5_000);
    },
  };
}
