import { FlowfleetError } from '@flowfleet/errors';
import {
  SyncAckSchema,
  WeightVersionRecordSchema,
  type ResolvedWeightRequirement,
  type ResolvedWeightRequirements,
  type SyncStatus,
  type WeightReport,
  type WeightRequirements,
  type WeightVersionRecord,
  type WeightVersionReport,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { CoordinatorKeys } from './keys.js';
import type { BuiltVersion } from './weight-version-builder.js';

/**
 * How a synced version fared across the fleet: `loaded` (some worker acked ok), `failed` (no
 * worker could load it and no live worker is still pending), `superseded` (a newer version came
 * before anyone loaded it), else `pending`.
 */
export type VersionStatus = WeightVersionReport['status'];

// KEYS: weights hash, sync stream, components set. ARGV: version, record JSON, sync JSON,
// channel, stream max length, component, LoRA base version (0: none). Returns
// {1, previous, streamId}, {0, current} (stale) or {2, current} (the base was never synced).
const SYNC_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'current') or '0')
local version = tonumber(ARGV[1])
if version <= current then return {0, current} end
local base = tonumber(ARGV[7])
if base > 0 and redis.call('HEXISTS', KEYS[1], 'v:' .. ARGV[7]) == 0 then return {2, current} end
redis.call('HSET', KEYS[1], 'current', ARGV[1], 'v:' .. ARGV[1], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[6])
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'sync', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return {1, current, id}`;

const SYNC_STREAM_MAX_LENGTH = 10_000;

/**
 * Weight versions per component: the atomic sync (check strictly-increasing, record, append to
 * the stream, publish — one Lua script, so concurrent coordinators cannot both win a version) and
 * the per-version report built from the acks workers write.
 */
export class WeightRegistry {
  readonly #redis: RedisClient;
  readonly #keys: CoordinatorKeys;

  constructor(redis: RedisClient, keys: CoordinatorKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /**
   * Records and broadcasts a version (its record in `v:<n>`, its message on the stream and the
   * channel).
   * @throws FlowfleetError `API_STALE_VERSION` when the version is not above the current one,
   *   `API_SYNC_BASE_UNKNOWN` when a LoRA version's base was never synced.
   */
  async sync(built: BuiltVersion): Promise<{ previous: number | null; streamId: string }> {
    const { sync } = built;
    const record = { ...built.record, at: new Date().toISOString() };
    const base = built.record.lora?.base ?? 0;
    const reply = (await this.#redis.eval(
      SYNC_SCRIPT,
      3,
      this.#keys.weights(sync.component),
      this.#keys.syncStream,
      this.#keys.weightComponents,
      String(sync.version),
      JSON.stringify(record),
      JSON.stringify(sync),
      this.#keys.syncChannel,
      String(SYNC_STREAM_MAX_LENGTH),
      sync.component,
      String(base),
    )) as [number, number, string?];
    const [applied, current, streamId] = reply;
    if (applied === 2) {
      throw new FlowfleetError(
        'API_SYNC_BASE_UNKNOWN',
        `${sync.component} has no version ${base} to merge the adapter of version ${sync.version} into`,
        { details: { component: sync.component, base, current, requested: sync.version } },
      );
    }
    if (applied !== 1 || streamId === undefined) {
      throw new FlowfleetError(
        'API_STALE_VERSION',
        `${sync.component} is at version ${current}; a sync must name a greater version (got ${sync.version})`,
        { details: { component: sync.component, current, requested: sync.version } },
      );
    }
    return { previous: current === 0 ? null : current, streamId };
  }

  /**
   * Resolves a request's weight requirements against the synced versions: each `maxStaleness` K
   * becomes `min: current − K` (dropped when that is below 1: any version a worker holds is then
   * within K of the current one), and reports the ones no synced version can meet: a `min` above
   * the current version, or an `exact` version that was never synced.
   */
  async resolve(required: WeightRequirements): Promise<{
    resolved: ResolvedWeightRequirements;
    unmet: { component: string; current: number | null; required: unknown }[];
  }> {
    const components = Object.keys(required).sort();
    const resolved: Record<string, ResolvedWeightRequirement> = {};
    if (components.length === 0) return { resolved, unmet: [] };
    const pipeline = this.#redis.pipeline();
    for (const component of components) {
      const requirement = required[component];
      const field = requirement !== undefined && 'exact' in requirement ? requirement.exact : 0;
      pipeline.hmget(this.#keys.weights(component), 'current', `v:${field}`);
    }
    const replies = (await pipeline.exec()) ?? [];
    const unmet = components.flatMap((component, i) => {
      const requirement = required[component];
      if (requirement === undefined) return [];
      const [error, values] = replies[i] ?? [null, [null, null]];
      if (error !== null) throw error;
      const [currentText, exactRecord] = values as [string | null, string | null];
      const current = currentText === null ? null : Number(currentText);
      if ('maxStaleness' in requirement) {
        const min = (current ?? 0) - requirement.maxStaleness;
        if (min >= 1) resolved[component] = { min };
        return [];
      }
      resolved[component] = requirement;
      const met =
        'exact' in requirement
          ? exactRecord !== null
          : current !== null && current >= requirement.min;
      return met ? [] : [{ component, current, required: requirement }];
    });
    return { resolved, unmet };
  }

  /** The current version of every component that was ever synced. */
  async currentVersions(): Promise<Map<string, number>> {
    const components = (await this.#redis.smembers(this.#keys.weightComponents)).sort();
    const versions = new Map<string, number>();
    if (components.length === 0) return versions;
    const pipeline = this.#redis.pipeline();
    for (const component of components) pipeline.hget(this.#keys.weights(component), 'current');
    const replies = (await pipeline.exec()) ?? [];
    components.forEach((component, i) => {
      const value = Number(replies[i]?.[1]);
      if (Number.isSafeInteger(value) && value > 0) versions.set(component, value);
    });
    return versions;
  }

  /**
   * The component's newest `limit` versions with their acks; `liveWorkers` decides when a
   * version nobody loaded counts as failed rather than pending.
   */
  async report(
    component: string,
    liveWorkers: readonly string[],
    limit: number,
  ): Promise<WeightReport> {
    const fields = await this.#redis.hgetall(this.#keys.weights(component));
    const currentValue = Number(fields['current']);
    const current = Number.isSafeInteger(currentValue) && currentValue > 0 ? currentValue : null;
    const versions = Object.keys(fields)
      .filter((field) => field.startsWith('v:'))
      .map((field) => Number(field.slice(2)))
      .filter((version) => Number.isSafeInteger(version) && version > 0)
      .sort((a, b) => b - a)
      .slice(0, limit);
    const pipeline = this.#redis.pipeline();
    for (const version of versions) pipeline.hgetall(this.#keys.acks(component, version));
    const replies = versions.length === 0 ? [] : ((await pipeline.exec()) ?? []);
    const report: Record<string, WeightVersionReport> = {};
    versions.forEach((version, i) => {
      const stored = safeJson(fields[`v:${version}`] ?? '');
      const parsed = WeightVersionRecordSchema.safeParse(stored);
      // A damaged record is reported as read: the route's response check turns it into a coded
      // 500 (COORD_RESPONSE_INVALID) with a log line rather than hiding the version.
      const record = parsed.success ? parsed.data : ((stored ?? {}) as WeightVersionRecord);
      const raw = (replies[i]?.[1] ?? {}) as Record<string, string>;
      const acks: Record<string, SyncStatus> = {};
      const reasons: Record<string, string> = {};
      const boundLayers: Record<string, number> = {};
      const fetchedBytes: Record<string, number> = {};
      for (const [workerId, json] of Object.entries(raw)) {
        const ack = SyncAckSchema.safeParse(safeJson(json));
        if (!ack.success || ack.data.version !== version) continue;
        acks[workerId] = ack.data.status;
        if (ack.data.reason !== undefined && ack.data.status !== 'ok') {
          reasons[workerId] = ack.data.reason;
        }
        if (ack.data.boundLayers !== undefined) boundLayers[workerId] = ack.data.boundLayers;
        if (ack.data.fetchedBytes !== undefined) fetchedBytes[workerId] = ack.data.fetchedBytes;
      }
      report[String(version)] = {
        sha256: record.sha256,
        sizeBytes: record.sizeBytes,
        syncedAt: record.at ?? new Date(0).toISOString(),
        status: versionStatus(acks, liveWorkers, version < (current ?? 0)),
        kind: record.kind ?? 'full',
        shards: record.shards?.length ?? 1,
        base: record.lora?.base ?? null,
        acks,
        reasons,
        boundLayers,
        fetchedBytes,
      };
    });
    return { component, current, versions: report };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Decides a version's fleet-wide status from its acks (see VersionStatus). */
export function versionStatus(
  acks: Readonly<Record<string, SyncStatus>>,
  liveWorkers: readonly string[],
  superseded: boolean,
): VersionStatus {
  const statuses = Object.values(acks);
  if (statuses.includes('ok')) return 'loaded';
  const livePending = liveWorkers.some((workerId) => acks[workerId] === undefined);
  if (statuses.length > 0 && !livePending) return 'failed';
  return superseded ? 'superseded' : 'pending';
}
