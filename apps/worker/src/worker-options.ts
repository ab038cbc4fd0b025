import { FlowfleetError } from '@flowfleet/errors';
import { DEFAULT_CARD_REGISTRY, type CardRegistry } from '@flowfleet/models';
import type { DeviceChoice, PlatformFacts } from '@flowfleet/platform';
import { NO_REPLICATION_WAIT, type RedisMode, type ReplicationPolicy } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { ExtraKernel } from './compute/extra-kernels.js';

/** Which backend runs the forward passes: `auto` prefers ONNX Runtime and falls back to `cpu`. */
export type BackendChoice = 'auto' | 'ort-cpu' | 'cpu';

/**
 * BullMQ lock and stall settings (README "Locks and stalls" says why these defaults). Locks are
 * renewed every `lockDurationMs / 4` while a job runs; a worker that dies leaves its job locked
 * for at most `lockDurationMs`, after which the next stalled check (every `stalledIntervalMs`, on
 * every worker serving the lane) moves it back to waiting. A job that stalls more than
 * `maxStalledCount` times is failed.
 */
export interface LockSettings {
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly maxStalledCount: number;
}

/** Production lock settings for minutes-long rollouts. */
export const DEFAULT_LOCK_SETTINGS: LockSettings = Object.freeze({
  lockDurationMs: 30_000,
  stalledIntervalMs: 15_000,
  maxStalledCount: 3,
});

/** Production heartbeat TTL (ms); the heartbeat is refreshed every third of it. */
export const DEFAULT_HEARTBEAT_TTL_MS = 15_000;

/** Default bounds and intervals (ms). */
export const DEFAULT_TIMINGS = Object.freeze({
  /** Active jobs get this long to finish on close before they are handed back to the queue. */
  drainTimeoutMs: 25_000,
  /** Fallback re-read of the lanes hash and the sync stream (pub/sub is the fast path). */
  rescanIntervalMs: 30_000,
  /** Longest idle wait between fetch attempts when no queue event wakes the worker. */
  pollIntervalMs: 1_000,
  /** How long a result upload is retried (coordinator restarting) before the attempt fails. */
  uploadRetryMs: 60_000,
  /** How long a job waits for the weight sync it needs before the attempt fails. */
  weightsWaitMs: 120_000,
});

/** How to build a worker. Only `redisUrl`, `coordinatorUrl` and `workerId` are required. */
export interface WorkerOptions {
  readonly redisUrl: string;
  /**
   * `standalone` (default), `cluster` (`redisUrl` then names any seed node) or `sentinel`
   * (`redisUrl` lists the sentinels and names the master group).
   */
  readonly redisMode?: RedisMode;
  /**
   * Replicas a job's completion must reach (`WAIT`) before the worker counts it done; default
   * none (`FLOWFLEET_REDIS_WAIT_REPLICAS`, ADR 010).
   */
  readonly redisReplication?: ReplicationPolicy;
  /** Base URL of the coordinator (result uploads, weight blobs). */
  readonly coordinatorUrl: string;
  /** Bearer token with the `worker` role; omit when the coordinator runs without auth. */
  readonly workerToken?: string;
  readonly workerId: string;
  /** Redis key prefix (default `ff`), shared with the coordinator. */
  readonly prefix?: string;
  /** The process-wide limit on concurrent rollouts across all lanes (default 1). */
  readonly concurrency?: number;
  /** Heartbeat TTL (default 15 s); refreshed every third of it. */
  readonly heartbeatTtlMs?: number;
  /** Default `auto`. */
  readonly backend?: BackendChoice;
  /**
   * Threads of the worker's compute pool, where ONNX Runtime and the TS reference run their
   * forwards (default: `concurrency`).
   */
  readonly ortThreads?: number;
  /** ONNX Runtime intra-op threads per session (default 1). */
  readonly ortIntraOpThreads?: number;
  /** Test-only: extra kernel cells that make two workers differ in capability. */
  readonly extraKernels?: readonly ExtraKernel[];
  /**
   * The device this worker serves (one device per worker process; FLOWFLEET_DEVICE): `auto`
   * (cuda, else a hardware WebGPU adapter, else cpu), or `cpu`, `cuda`, `webgpu` to insist (the
   * worker does not start when that device is not here). Default: what FLOWFLEET_DEVICE says.
   */
  readonly device?: DeviceChoice;
  /** Test-only: platform facts instead of detection (for several workers in one process). */
  readonly platformFacts?: PlatformFacts;
  /** Model cards to load, by id in `cards` (default: the cards of `cards` marked loadByDefault). */
  readonly models?: readonly string[];
  /** The cards `models` names (default: the shipped cards, `DEFAULT_CARD_REGISTRY`). */
  readonly cards?: CardRegistry;
  readonly locks?: Partial<LockSettings>;
  readonly drainTimeoutMs?: number;
  readonly rescanIntervalMs?: number;
  readonly pollIntervalMs?: number;
  readonly uploadRetryMs?: number;
  readonly weightsWaitMs?: number;
  /**
   * The peer server that serves verified weight ranges to other workers (ADR 009); unset or
   * `false`: off here (the worker process turns it on by default: FLOWFLEET_PEER_PORT).
   */
  readonly peer?: PeerServerSettings | false;
  /** One cap on the bytes per second the peer server sends (a token bucket); default none. */
  readonly egressBytesPerSecond?: number;
  /** Default: silent. */
  readonly logger?: Logger;
}

/** Where the peer server listens and what it advertises. */
export interface PeerServerSettings {
  /** Bind address (default `peerBindHost(coordinatorUrl)`). */
  readonly host?: string;
  /** Port (default 0: an ephemeral one). */
  readonly port?: number;
  /** The URL peers dial (default `http://<host or hostname>:<bound port>`). */
  readonly advertiseUrl?: string;
}

/** WorkerOptions with every default applied. */
export interface ResolvedWorkerOptions extends Required<
  Omit<
    WorkerOptions,
    | 'workerToken'
    | 'platformFacts'
    | 'device'
    | 'logger'
    | 'locks'
    | 'ortThreads'
    | 'peer'
    | 'egressBytesPerSecond'
  >
> {
  readonly peer: PeerServerSettings | false;
  readonly egressBytesPerSecond: number | undefined;
  readonly workerToken: string | undefined;
  readonly platformFacts: PlatformFacts | undefined;
  readonly device: DeviceChoice | undefined;
  readonly locks: LockSettings;
  readonly ortThreads: number;
}

function positive(name: string, value: number, min = 1): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new FlowfleetError('WORKER_INVALID_OPTION', `${name} must be an integer ≥ ${min}`, {
      details: { option: name, value },
    });
  }
  return value;
}

/**
 * Fills in defaults and checks the options.
 * @throws FlowfleetError WORKER_INVALID_OPTION
 */
export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  const concurrency = positive('concurrency', options.concurrency ?? 1);
  const locks: LockSettings = { ...DEFAULT_LOCK_SETTINGS, ...options.locks };
  positive('locks.lockDurationMs', locks.lockDurationMs, 100);
  positive('locks.stalledIntervalMs', locks.stalledIntervalMs, 100);
  positive('locks.maxStalledCount', locks.maxStalledCount, 1);
  return {
    redisUrl: options.redisUrl,
    redisMode: options.redisMode ?? 'standalone',
    redisReplication: options.redisReplication ?? NO_REPLICATION_WAIT,
    coordinatorUrl: options.coordinatorUrl.replace(/\/+$/, ''),
    workerToken: options.workerToken,
    workerId: options.workerId,
    prefix: options.prefix ?? 'ff',
    concurrency,
    heartbeatTtlMs: positive(
      'heartbeatTtlMs',
      options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS,
      300,
    ),
    backend: options.backend ?? 'auto',
    ortThreads: positive('ortThreads', options.ortThreads ?? concurrency),
    ortIntraOpThreads: positive('ortIntraOpThreads', options.ortIntraOpThreads ?? 1),
    extraKernels: options.extraKernels ?? [],
    platformFacts: options.platformFacts,
    device: options.device,
    models: options.models ?? (options.cards ?? DEFAULT_CARD_REGISTRY).defaultIds,
    cards: options.cards ?? DEFAULT_CARD_REGISTRY,
    locks,
    drainTimeoutMs: positive(
      'drainTimeoutMs',
      options.drainTimeoutMs ?? DEFAULT_TIMINGS.drainTimeoutMs,
      0,
    ),
    rescanIntervalMs: positive(
      'rescanIntervalMs',
      options.rescanIntervalMs ?? DEFAULT_TIMINGS.rescanIntervalMs,
      10,
    ),
    pollIntervalMs: positive(
      'pollIntervalMs',
      options.pollIntervalMs ?? DEFAULT_TIMINGS.pollIntervalMs,
      10,
    ),
    uploadRetryMs: positive(
      'uploadRetryMs',
      options.uploadRetryMs ?? DEFAULT_TIMINGS.uploadRetryMs,
      0,
    ),
    weightsWaitMs: positive(
      'weightsWaitMs',
      options.weightsWaitMs ?? DEFAULT_TIMINGS.weightsWaitMs,
      0,
    ),
    peer: options.peer === undefined || options.peer === false ? false : checkPeer(options.peer),
    egressBytesPerSecond:
      options.egressBytesPerSecond === undefined
        ? undefined
        : positive('egressBytesPerSecond', options.egressBytesPerSecond),
  };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

/**
 * The peer server's default bind address: loopback (127.0.0.1) when the coordinator is reached
 * on loopback — a one-host fleet such as `flowfleet up`, where nothing else should reach the
 * port — else every interface (0.0.0.0), so workers on other hosts can fetch from it (it answers
 * only the fleet's worker token). FLOWFLEET_PEER_HOST (or `peer.host`) overrides it.
 */
export function peerBindHost(coordinatorUrl: string): string {
  let host: string;
  try {
    host = new URL(coordinatorUrl).hostname;
  } catch {
    return '0.0.0.0';
  }
  return LOOPBACK.test(host) ? '127.0.0.1' : '0.0.0.0';
}

function checkPeer(peer: PeerServerSettings): PeerServerSettings {
  if (peer.port !== undefined && positive('peer.port', peer.port, 0) > 65_535) {
    throw new FlowfleetError('WORKER_INVALID_OPTION', 'peer.port must be at most 65535', {
      details: { option: 'peer.port', value: peer.port },
    });
  }
  if (peer.advertiseUrl !== undefined && !/^https?:\/\/[^/]+/.test(peer.advertiseUrl)) {
    throw new FlowfleetError('WORKER_INVALID_OPTION', 'peer.advertiseUrl must be an http(s) URL', {
      details: { option: 'peer.advertiseUrl', value: peer.advertiseUrl },
    });
  }
  return peer;
}
