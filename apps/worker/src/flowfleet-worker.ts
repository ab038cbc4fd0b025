import type { ComputeThreadStats } from '@flowfleet/platform';
import type { WorkerManifest } from '@flowfleet/protocol';
import type { ModelInstance } from '@flowfleet/runtime';

/** A snapshot of what a worker is doing. */
export interface WorkerStats {
  readonly workerId: string;
  readonly activeJobs: number;
  /** The most rollouts that ever ran at once (never above the concurrency limit). */
  readonly maxActiveJobs: number;
  readonly lanes: readonly string[];
  readonly weights: Readonly<Record<string, number>>;
  /** Float32 bytes of the text embeddings cached, and the blob fetches that filled the cache. */
  readonly embeds: { readonly cacheBytes: number; readonly fetches: number };
}

/** A running (or closed) worker. */
export interface FlowfleetWorker {
  readonly workerId: string;
  /**
   * Detects the platform, builds the models, catches up on weight syncs, registers, and starts
   * serving the lanes it satisfies.
   * @throws FlowfleetError WORKER_REDIS_UNAVAILABLE, WORKER_BACKEND_UNAVAILABLE, PLAT_*, MODEL_*
   */
  start(): Promise<void>;
  /**
   * Stops fetching, drains running jobs within the bound (then hands the rest back to the
   * queue), disposes models and sessions, deletes the heartbeat and closes Redis. Every step runs
   * even when one fails. Idempotent.
   */
  close(): Promise<void>;
  stats(): WorkerStats;
  /**
   * Each compute thread's counters (empty before start and after close): e.g. the weight bytes
   * it shares with the main thread (`weightBytesShared`) or holds as copies (`weightBytesCopied`,
   * and the ONNX Runtime handler's `weightBytesPrivateCopies`).
   */
  computeStats(): Promise<readonly ComputeThreadStats[]>;
  /** The manifest as last registered. @throws Error before `start()` */
  manifest(): WorkerManifest;
  /** The ModelInstance of a model (default: the first served; inspection: weights, graphs). */
  modelInstance(model?: string): ModelInstance;
  /** Why this worker does not serve `lane` (undefined when it does, or never saw it). */
  whyNotServing(lane: string): readonly string[] | undefined;
}
