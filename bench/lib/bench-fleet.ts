// The fleet the fleet and sync benches run: the coordinator in-process on a real Redis under its
// own key prefix, and (bench:sync) in-process workers (cpu backend) serving a given card. Everything started
// here is closed by the returned handles; the caller registers those with its Teardown.
import { randomBytes } from 'node:crypto';
import {
  createCoordinator,
  FsBlobStore,
  type BlobStore,
  type Coordinator,
  type ResultFile,
} from '@flowfleet/coordinator';
import { createCardRegistry, type CardRegistry, type ModelCard } from '@flowfleet/models';
import { createWorker, type FlowfleetWorker, type WorkerOptions } from '@flowfleet/worker';
import { Redis } from 'ioredis';

/** Bearer tokens of the bench coordinator (auth on, as in production). */
export const BENCH_TOKENS = Object.freeze({
  trainer: `bench-trainer-${randomBytes(8).toString('hex')}`,
  viewer: `bench-viewer-${randomBytes(8).toString('hex')}`,
  worker: `bench-worker-${randomBytes(8).toString('hex')}`,
});

/** A running in-process coordinator. */
export interface BenchCoordinator {
  readonly coordinator: Coordinator;
  readonly url: string;
  readonly prefix: string;
  /** fetch against the coordinator with the trainer token. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** Closes the coordinator and deletes every key under its prefix. */
  close(): Promise<void>;
}

/** A fresh key prefix per fleet, so runs never see each other's lanes or versions. */
export function benchPrefix(name: string): string {
  return `bench-${name}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** Deletes every key under `{prefix}` (SCAN, never KEYS on a shared server). */
export async function deletePrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Called after each result file is stored, with how long the store took (ms). */
export type ResultStoredListener = (jobId: string, file: ResultFile, ms: number) => void;

/** The default filesystem store, calling `onResultStored` after each result file is stored. */
function observedBlobStore(blobDir: string, onResultStored: ResultStoredListener): BlobStore {
  const inner = new FsBlobStore(blobDir);
  return {
    init: () => inner.init(),
    putBlob: (source, maxBytes) => inner.putBlob(source, maxBytes),
    statBlob: (sha256) => inner.statBlob(sha256),
    openBlob: (sha256, range) => inner.openBlob(sha256, range),
    blobDigest: (sha256) => inner.blobDigest(sha256),
    async putResult(jobId, file, source, maxBytes) {
      const started = performance.now();
      const written = await inner.putResult(jobId, file, source, maxBytes);
      onResultStored(jobId, file, performance.now() - started);
      return written;
    },
    openResult: (jobId, file, range) => inner.openResult(jobId, file, range),
    listBlobs: () => inner.listBlobs(),
    deleteBlob: (sha256) => inner.deleteBlob(sha256),
    listResults: () => inner.listResults(),
    deleteResult: (jobId) => inner.deleteResult(jobId),
    close: () => inner.close(),
  };
}

/**
 * Starts a coordinator on `redisUrl` under `prefix`, storing blobs in `blobDir` (the default
 * filesystem store; `onResultStored` observes result writes), checking requests against `cards`
 * (default: the shipped cards).
 */
export async function startBenchCoordinator(
  redisUrl: string,
  prefix: string,
  blobDir: string,
  onResultStored?: ResultStoredListener,
  cards?: CardRegistry,
  egressBytesPerSecond?: number,
): Promise<BenchCoordinator> {
  const coordinator = createCoordinator({
    redisUrl,
    prefix,
    tokens: BENCH_TOKENS,
    blobDir,
    // Fleets under different prefixes share one blob dir (uploaded once): a coordinator must not
    // collect the blobs its own prefix does not reference (the 600 s default did, mid-bench:sync).
    retention: { weightGraceSeconds: 24 * 3600 },
    ...(egressBytesPerSecond === undefined ? {} : { egressBytesPerSecond }),
    ...(cards === undefined ? {} : { cards }),
    ...(onResultStored === undefined
      ? {}
      : { blobStore: observedBlobStore(blobDir, onResultStored) }),
  });
  let url: string;
  try {
    url = await coordinator.start(0);
  } catch (error) {
    await coordinator.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    coordinator,
    url,
    prefix,
    api: (path, init = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${BENCH_TOKENS.trainer}`, ...init.headers },
      }),
    close() {
      closed ??= (async () => {
        await coordinator.close();
        await deletePrefix(redisUrl, prefix);
      })();
      return closed;
    },
  };
}

/** How to start the bench workers. */
export interface BenchWorkerOptions {
  readonly redisUrl: string;
  readonly coordinator: Pick<BenchCoordinator, 'url' | 'prefix'>;
  /** The worker-role token (default this process's BENCH_TOKENS.worker). */
  readonly workerToken?: string;
  /** Workers are named `bench-w<firstIndex + i>` (default 1). */
  readonly firstIndex?: number;
  readonly card: ModelCard;
  readonly concurrency: number;
  /** Peer servers for fan-out (bench:sync); default off. */
  readonly peer?: WorkerOptions['peer'];
  /** Each worker's own egress cap (its peer server's token bucket). */
  readonly egressBytesPerSecond?: number;
}

/**
 * Starts `count` in-process workers serving `card` (cpu backend, production lock settings) in
 * parallel; on a failure the ones already started are closed.
 */
export async function startBenchWorkers(
  count: number,
  options: BenchWorkerOptions,
): Promise<FlowfleetWorker[]> {
  const { coordinator } = options;
  const workers = Array.from({ length: count }, (_, i) =>
    createWorker({
      redisUrl: options.redisUrl,
      coordinatorUrl: coordinator.url,
      workerToken: options.workerToken ?? BENCH_TOKENS.worker,
      workerId: `bench-w${(options.firstIndex ?? 1) + i}`,
      prefix: coordinator.prefix,
      backend: 'cpu',
      cards: createCardRegistry([options.card]),
      models: [options.card.id],
      concurrency: options.concurrency,
      drainTimeoutMs: 2_000,
      ...(options.peer === undefined ? {} : { peer: options.peer }),
      ...(options.egressBytesPerSecond === undefined
        ? {}
        : { egressBytesPerSecond: options.egressBytesPerSecond }),
    }),
  );
  const started = await Promise.allSettled(workers.map((worker) => worker.start()));
  const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure !== undefined) {
    await closeWorkers(workers);
    throw failure.reason;
  }
  return workers;
}

/** Closes workers in parallel; every one is closed even if another fails. */
export async function closeWorkers(workers: readonly FlowfleetWorker[]): Promise<void> {
  await Promise.allSettled(workers.map((worker) => worker.close()));
}
