import { FlowfleetError } from '@flowfleet/errors';
import { MAX_WEIGHT_VERSION } from './atoms.js';

const KEY_PART = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The Redis key layout the worker and coordinator share (STYLE.md rule 4: one module builds every
 * key). Control-plane keys (workers, heartbeats, lanes, weights, sync channel, limits) carry the one
 * hash tag `{<prefix>}`, so they live in one Redis Cluster slot and multi-key Lua scripts (sync,
 * forgetting a dead worker) stay legal there. Each lane's BullMQ queue has a tag of its own,
 * `{<prefix>:<lane>}`, so on a cluster the lanes (where the job traffic is) spread over shards,
 * while every key of one queue (and so every BullMQ script) stays in one slot.
 */
export interface FleetKeys {
  /** The configured prefix, e.g. `ff`. */
  readonly prefix: string;
  /** `{<prefix>}`: the hash tag that starts every key. */
  readonly tag: string;
  /**
   * The BullMQ `prefix` option of one lane's queue: `{<prefix>:<lane>}:bull`, the lane's own hash
   * tag. Its keys are `<that>:<lane>:<suffix>` (BullMQ's layout).
   */
  laneBullPrefix(lane: string): string;
  /** Set: ids of registered workers. */
  readonly workers: string;
  /** String: a worker's manifest JSON. */
  worker(workerId: string): string;
  /** String with a TTL: a worker's heartbeat JSON; its absence means the worker is dead. */
  heartbeat(workerId: string): string;
  /** Hash: lane name → LaneSpec JSON. */
  readonly lanes: string;
  /** Pub/sub channel: a LaneSpec JSON whenever a new lane is recorded. */
  readonly laneChannel: string;
  /**
   * Pub/sub channel (Redis Cluster only): a lane's name whenever a job is added to it. On a
   * cluster each lane's events stream is in its own slot, so no one XREAD can wake a worker for
   * all its lanes; this one channel does (ADR 008), and idle workers poll only as a fallback.
   */
  readonly laneWorkChannel: string;
  /**
   * Hash: a component's desired state (ADR 012) — `latest` → the newest synced version, `v:<n>` →
   * each version's record JSON (manifest, LoRA base, fan-out plan). A worker reads it whole.
   */
  weights(component: string): string;
  /** Pub/sub channel: each WeightSync JSON as it happens (a trigger: workers reconcile). */
  readonly syncChannel: string;
  /** Hash: worker id → SyncAck JSON, for one component version. */
  acks(component: string, version: number): string;
  /**
   * Hash: limit name → decimal integer, the widest limits any coordinator has enforced (each
   * coordinator raises the fields it enforces at start; workers validate jobs with them).
   */
  readonly limits: string;
}

/**
 * Checks that `value` is safe inside a key: 1–128 of [A-Za-z0-9._-] (no ':', braces or spaces,
 * which would break the layout or the hash tag). Returns it unchanged.
 * @throws FlowfleetError PROTO_INVALID_KEY
 */
export function fleetKeyPart(what: string, value: string): string {
  if (typeof value !== 'string' || !KEY_PART.test(value)) {
    throw new FlowfleetError(
      'PROTO_INVALID_KEY',
      `${what} must be 1–128 of [A-Za-z0-9._-] to be used in a Redis key, got ${JSON.stringify(value)}`,
      { details: { what, value: String(value) } },
    );
  }
  return value;
}

function versionPart(version: number): number {
  if (!Number.isSafeInteger(version) || version < 1 || version > MAX_WEIGHT_VERSION) {
    throw new FlowfleetError(
      'PROTO_INVALID_KEY',
      `a weight version is an integer in [1, 2^31 − 1]`,
      {
        details: { what: 'version', value: String(version) },
      },
    );
  }
  return version;
}

/**
 * The key layout under `prefix` (default `ff`).
 * @throws FlowfleetError PROTO_INVALID_KEY when the prefix, a worker id, lane, component or version
 *   is not a valid key part
 */
export function fleetKeys(prefix = 'ff'): FleetKeys {
  const tag = `{${fleetKeyPart('key prefix', prefix)}}`;
  return Object.freeze({
    prefix,
    tag,
    laneBullPrefix: (lane: string) => `{${prefix}:${fleetKeyPart('lane', lane)}}:bull`,
    workers: `${tag}:workers`,
    worker: (workerId: string) => `${tag}:worker:${fleetKeyPart('worker id', workerId)}`,
    heartbeat: (workerId: string) => `${tag}:heartbeat:${fleetKeyPart('worker id', workerId)}`,
    lanes: `${tag}:lanes`,
    laneChannel: `${tag}:chan:lanes`,
    laneWorkChannel: `${tag}:chan:lane-work`,
    weights: (component: string) => `${tag}:weights:${fleetKeyPart('component', component)}`,
    syncChannel: `${tag}:chan:sync`,
    limits: `${tag}:limits`,
    acks: (component: string, version: number) =>
      `${tag}:acks:${fleetKeyPart('component', component)}:${versionPart(version)}`,
  });
}
