import type { WeightVersionRecord } from '@flowfleet/protocol';

/** One component's recorded versions, as read from its weights hash. */
export interface ComponentVersions {
  /** The newest synced version (the hash's `latest`; 0 when it names none). */
  readonly latest: number;
  /** Every `v:<n>` record; `undefined` for a record that could not be read (kept, never guessed at). */
  readonly records: ReadonlyMap<number, WeightVersionRecord | undefined>;
}

/** What the plan needs to know besides the records. */
export interface WeightGcInput {
  readonly components: ReadonlyMap<string, ComponentVersions>;
  /** Versions live workers hold, per component (their manifests' `weights`). */
  readonly held: ReadonlyMap<string, ReadonlySet<number>>;
  /** Versions queued or running jobs require exactly, per component (their payloads' `weights`). */
  readonly pinned: ReadonlyMap<string, ReadonlySet<number>>;
  readonly nowMs: number;
  /** The newest this-many versions per component are kept. */
  readonly versionsKept: number;
  /** A version synced less than this long ago is kept. */
  readonly graceMs: number;
}

/** Why a version stays (the first reason that applies), for logs and tests. */
export type KeepReason = 'latest' | 'newest' | 'held' | 'pinned' | 'grace' | 'unreadable' | 'base';

/** The plan: versions to forget, and every blob the kept versions still name. */
export interface WeightGcPlan {
  readonly drop: readonly { readonly component: string; readonly version: number }[];
  readonly kept: ReadonlyMap<string, ReadonlyMap<number, KeepReason>>;
  /** Blobs (sha256) that kept versions name: never deleted. */
  readonly referencedBlobs: ReadonlySet<string>;
}

/** Every blob a version record names: its content id, its shards, its manifest. */
export function blobsOfRecord(record: WeightVersionRecord): string[] {
  const blobs = [record.sha256, ...(record.shards ?? []).map((shard) => shard.sha256)];
  if (record.manifest) blobs.push(record.manifest.sha256);
  return blobs;
}

function keepReason(
  version: number,
  record: WeightVersionRecord | undefined,
  newest: ReadonlySet<number>,
  latest: number,
  held: ReadonlySet<number> | undefined,
  pinned: ReadonlySet<number> | undefined,
  input: WeightGcInput,
): KeepReason | undefined {
  if (version >= latest) return 'latest';
  if (newest.has(version)) return 'newest';
  if (held?.has(version) === true) return 'held';
  if (pinned?.has(version) === true) return 'pinned';
  if (record === undefined) return 'unreadable';
  const syncedAt = record.at === undefined ? Number.NaN : Date.parse(record.at);
  // A record without a readable time is treated as new: it is kept until a sweep can tell.
  if (!(input.nowMs - syncedAt >= input.graceMs)) return 'grace';
  return undefined;
}

/**
 * Decides which superseded weight versions can be forgotten. A version stays when it is the latest
 * (or newer), among the newest `versionsKept`, held by a live worker, pinned exactly by a queued
 * or running job, younger than the grace, unreadable, or the base of a LoRA version that stays
 * (followed through chains of adapters). Pure: the caller reads and deletes.
 */
export function planWeightGc(input: WeightGcInput): WeightGcPlan {
  const drop: { component: string; version: number }[] = [];
  const kept = new Map<string, Map<number, KeepReason>>();
  const referencedBlobs = new Set<string>();
  for (const [component, { latest, records }] of input.components) {
    const versions = [...records.keys()].sort((a, b) => b - a);
    const newest = new Set(versions.slice(0, Math.max(1, input.versionsKept)));
    const keep = new Map<number, KeepReason>();
    for (const version of versions) {
      const reason = keepReason(
        version,
        records.get(version),
        newest,
        latest,
        input.held.get(component),
        input.pinned.get(component),
        input,
      );
      if (reason !== undefined) keep.set(version, reason);
    }
    // A kept adapter needs its base, which may itself be an adapter: follow until a fixed point.
    const pending = [...keep.keys()];
    while (pending.length > 0) {
      const base = records.get(pending.pop()!)?.lora?.base;
      if (base !== undefined && records.has(base) && !keep.has(base)) {
        keep.set(base, 'base');
        pending.push(base);
      }
    }
    for (const version of versions) {
      if (keep.has(version)) {
        const record = records.get(version);
        if (record !== undefined)
          for (const blob of blobsOfRecord(record)) referencedBlobs.add(blob);
      } else {
        drop.push({ component, version });
      }
    }
    kept.set(component, keep);
  }
  return { drop, kept, referencedBlobs };
}
