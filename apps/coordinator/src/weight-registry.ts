import { FlowfleetError } from '@flowfleet/errors';
import {
  SyncAckSchema,
  WeightVersionRecordSchema,
  type FanoutPlan,
  type ResolvedWeightRequirement,
  type ResolvedWeightRequirements,
  type SyncAck,
  type SyncStatus,
  type WeightReport,
  type WeightRequirement,
  type WeightRequirements,
  type WeightVersionRecord,
  type WeightVersionReport,
  jsonFromRedis,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { CoordinatorKeys } from './keys.js';
import type { BuiltVersion } from './weight-version-builder.js';
import {
  judgeRequirement,
  servedBy,
  versionStatus,
  versionsToJudge,
  type AcksByVersion,
} from './weight-status.js';

// KEYS: weights hash, components set. ARGV: version, record JSON (its fan-out plan in it), sync
// JSON, channel, component, LoRA base version (0: none). The record is written before the publish,
// so a worker that hears the sync reads it. Returns {1, previous}, {0, latest} (stale) or
// {2, latest} (the base was never synced).
const SYNC_SCRIPT = `
local latest = tonumber(redis.call('HGET', KEYS[1], 'latest') or '0')
local version = tonumber(ARGV[1])
if version <= latest then return {0, latest} end
local base = tonumber(ARGV[6])
if base > 0 and redis.call('HEXISTS', KEYS[1], 'v:' .. ARGV[6]) == 0 then return {2, latest} end
redis.call('HSET', KEYS[1], 'latest', ARGV[1], 'v:' .. ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return {1, latest}`;

/** A live worker as the registry reads it: its id and what its manifest holds. */
export interface LiveHolder {
  readonly workerId: string;
  readonly weights: Readonly<Record<string, number>>;
}

/** A requirement no live worker can serve (the 409's details). */
export interface UnmetRequirement {
  readonly component: string;
  readonly required: WeightRequirement;
  /** The newest version an eligible worker serves (what `maxStaleness` counts from). */
  readonly current: number | null;
  /** The newest synced version. */
  readonly latest: number | null;
  readonly reason: string;
}

/** The versions named by `v:<n>` fields of a weights hash, and which of them parse. */
function versionsOf(fields: Readonly<Record<string, string>>): {
  latest: number;
  versions: number[];
  recorded: Set<number>;
} {
  const latestValue = Number(fields['latest']);
  const latest = Number.isSafeInteger(latestValue) && latestValue > 0 ? latestValue : 0;
  const versions: number[] = [];
  const recorded = new Set<number>();
  for (const [field, text] of Object.entries(fields)) {
    if (!field.startsWith('v:')) continue;
    const version = Number(field.slice(2));
    if (!Number.isSafeInteger(version) || version < 1) continue;
    versions.push(version);
    if (parseRedisJson(WeightVersionRecordSchema, text).success) recorded.add(version);
  }
  return { latest, versions: versions.sort((a, b) => b - a), recorded };
}

/** One version's acks as read from its hash (unreadable or misfiled ones left out). */
function parseAcks(version: number, raw: Readonly<Record<string, string>>): SyncAck[] {
  return Object.values(raw).flatMap((json) => {
    const ack = parseRedisJson(SyncAckSchema, json);
    return ack.success && ack.data.version === version ? [ack.data] : [];
  });
}

/**
 * Weight versions per component (ADR 012): the atomic sync (check strictly-increasing, record,
 * publish — one Lua script, so concurrent coordinators cannot both win a version), the judgement
 * of a rollout's weight requirements against what live workers serve, and the per-version report
 * built from the acks workers write and the versions their manifests hold.
 */
export class WeightRegistry {
  readonly #redis: RedisClient;
  readonly #keys: CoordinatorKeys;

  constructor(redis: RedisClient, keys: CoordinatorKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /**
   * Records and broadcasts a version: its record (with its fan-out plan) in `v:<n>` and `latest`
   * of the component's weights hash, the component in the components set, the message on the sync
   * channel.
   * @throws FlowfleetError `API_STALE_VERSION` when the version is not above the latest one,
   *   `API_SYNC_BASE_UNKNOWN` when a LoRA version's base was never synced.
   */
  async sync(
    built: BuiltVersion,
    plan: FanoutPlan = { chain: [], chunkBytes: 4 * 1024 * 1024 },
  ): Promise<{ previous: number | null }> {
    const { sync } = built;
    const record: WeightVersionRecord = {
      ...built.record,
      at: new Date().toISOString(),
      ...(plan.chain.length === 0 ? {} : { plan }),
    };
    const base = built.record.lora?.base ?? 0;
    const reply = (await this.#redis.eval(
      SYNC_SCRIPT,
      2,
      this.#keys.weights(sync.component),
      this.#keys.weightComponents,
      String(sync.version),
      JSON.stringify(record),
      JSON.stringify(sync),
      this.#keys.syncChannel,
      sync.component,
      String(base),
    )) as [number, number];
    const [applied, latest] = reply;
    if (applied === 2) {
      throw new FlowfleetError(
        'API_SYNC_BASE_UNKNOWN',
        `${sync.component} has no version ${base} to merge the adapter of version ${sync.version} into`,
        { details: { component: sync.component, base, latest, requested: sync.version } },
      );
    }
    if (applied !== 1) {
      throw new FlowfleetError(
        'API_STALE_VERSION',
        `${sync.component} has version ${latest}; a sync must name a greater version (got ${sync.version})`,
        { details: { component: sync.component, latest, requested: sync.version } },
      );
    }
    return { previous: latest === 0 ? null : latest };
  }

  /**
   * Judges a request's weight requirements against the live workers that can run the job
   * (`eligible`; none: the job would be held for capacity) — see `judgeRequirement`: each
   * `maxStaleness` becomes a `min` against the newest version an eligible worker serves, and a
   * requirement no eligible worker serves or can load is reported unmet. Two round trips at most:
   * every component's weights hash, then the acks of the versions above what some worker holds
   * (none when every eligible worker holds the latest).
   */
  async resolve(
    required: WeightRequirements,
    eligible: readonly LiveHolder[],
  ): Promise<{ resolved: ResolvedWeightRequirements; unmet: UnmetRequirement[] }> {
    const components = Object.keys(required).sort();
    const resolved: Record<string, ResolvedWeightRequirement> = {};
    const unmet: UnmetRequirement[] = [];
    if (components.length === 0) return { resolved, unmet };
    const hashes = await this.#hgetalls(components.map((c) => this.#keys.weights(c)));
    const plans = components.map((component, i) => {
      const { latest, recorded } = versionsOf(hashes[i] ?? {});
      const holders = eligible.map((worker) => ({
        workerId: worker.workerId,
        held: worker.weights[component],
      }));
      return { component, latest, recorded, holders, versions: versionsToJudge(recorded, holders) };
    });
    const judged = plans.flatMap((plan) => plan.versions.map((v) => [plan.component, v] as const));
    const ackReplies = await this.#hgetalls(
      judged.map(([component, version]) => this.#keys.acks(component, version)),
    );
    const acksOf = new Map<string, Map<number, Record<string, SyncStatus>>>();
    judged.forEach(([component, version], i) => {
      const statuses = Object.fromEntries(
        parseAcks(version, ackReplies[i] ?? {}).map((ack) => [ack.workerId, ack.status]),
      );
      const byVersion = acksOf.get(component) ?? new Map<number, Record<string, SyncStatus>>();
      byVersion.set(version, statuses);
      acksOf.set(component, byVersion);
    });
    for (const { component, latest, recorded, holders } of plans) {
      const requirement = required[component]!;
      const judgement = judgeRequirement(requirement, holders, {
        latest,
        recorded,
        acks: acksOf.get(component) ?? new Map(),
      });
      if (!judgement.ok) {
        unmet.push({
          component,
          required: requirement,
          current: judgement.current,
          latest: latest === 0 ? null : latest,
          reason: judgement.reason,
        });
      } else if (judgement.resolved !== undefined) {
        resolved[component] = judgement.resolved;
      }
    }
    return { resolved, unmet };
  }

  /** The newest synced version of every component that was ever synced. */
  async latestVersions(): Promise<Map<string, number>> {
    const components = (await this.#redis.smembers(this.#keys.weightComponents)).sort();
    const versions = new Map<string, number>();
    if (components.length === 0) return versions;
    const pipeline = this.#redis.pipeline();
    for (const component of components) pipeline.hget(this.#keys.weights(component), 'latest');
    const replies = (await pipeline.exec()) ?? [];
    components.forEach((component, i) => {
      const value = Number(replies[i]?.[1]);
      if (Number.isSafeInteger(value) && value > 0) versions.set(component, value);
    });
    return versions;
  }

  /**
   * The component's newest `limit` versions with their acks, who holds each (the live workers'
   * manifests, and a live worker's `ok` ack newer than its manifest) and its status; `current` is
   * the newest version a live worker holds, `latest` the newest synced one.
   */
  async report(
    component: string,
    live: readonly LiveHolder[],
    limit: number,
  ): Promise<WeightReport> {
    const fields = await this.#redis.hgetall(this.#keys.weights(component));
    const { latest, versions: all } = versionsOf(fields);
    const versions = all.slice(0, limit);
    const replies = await this.#hgetalls(
      versions.map((version) => this.#keys.acks(component, version)),
    );
    const acks = new Map<number, SyncAck[]>();
    versions.forEach((version, i) => acks.set(version, parseAcks(version, replies[i] ?? {})));
    const statuses: AcksByVersion = new Map(
      [...acks].map(([version, list]) => [
        version,
        Object.fromEntries(list.map((ack) => [ack.workerId, ack.status])),
      ]),
    );
    const liveIds = live.map((worker) => worker.workerId);
    const servedNow = live.map((worker) => ({
      workerId: worker.workerId,
      version: servedBy({ workerId: worker.workerId, held: worker.weights[component] }, statuses),
    }));
    const report: Record<string, WeightVersionReport> = {};
    let current: number | null = null;
    for (const version of versions) {
      const stored = jsonFromRedis(fields[`v:${version}`]);
      const parsed = WeightVersionRecordSchema.safeParse(stored);
      // A damaged record is reported as read: the route's response check turns it into a coded
      // 500 (COORD_RESPONSE_INVALID) with a log line rather than hiding the version.
      const record = parsed.success ? parsed.data : ((stored ?? {}) as WeightVersionRecord);
      const holders = servedNow.filter((w) => w.version === version).map((w) => w.workerId);
      if (holders.length > 0) current ??= version;
      const list = acks.get(version) ?? [];
      const byStatus = statuses.get(version) ?? {};
      const per = <T>(pick: (ack: SyncAck) => T | undefined): Record<string, T> =>
        Object.fromEntries(
          list.flatMap((ack) => {
            const value = pick(ack);
            return value === undefined ? [] : [[ack.workerId, value]];
          }),
        );
      report[String(version)] = {
        sha256: record.sha256,
        sizeBytes: record.sizeBytes,
        syncedAt: record.at ?? new Date(0).toISOString(),
        status: versionStatus(byStatus, holders, liveIds, version < latest),
        holders: holders.sort(),
        kind: record.kind ?? 'full',
        shards: record.shards?.length ?? 1,
        base: record.lora?.base ?? null,
        acks: byStatus,
        codes: per((ack) => (ack.status === 'ok' ? undefined : ack.code)),
        reasons: per((ack) => (ack.status === 'ok' ? undefined : ack.reason)),
        boundLayers: per((ack) => ack.boundLayers),
        fetchedBytes: per((ack) => ack.fetchedBytes),
        sources: per((ack) => ack.sources),
        fallbacks: per((ack) =>
          ack.fallbackCount !== undefined && ack.fallbackCount > 0 ? ack.fallbackCount : undefined,
        ),
      };
    }
    // A live worker may hold a version beyond the reported ones (a small `limit`).
    const newestHeld = Math.max(0, ...servedNow.map((w) => w.version ?? 0));
    if (current === null && newestHeld > 0) current = newestHeld;
    const latestEntry = report[String(latest)];
    return {
      component,
      current,
      latest:
        latest === 0
          ? null
          : {
              version: latest,
              status:
                latestEntry?.status ??
                (servedNow.some((w) => w.version === latest) ? 'loaded' : 'pending'),
            },
      versions: report,
    };
  }

  /** `HGETALL` of each key, in one pipeline; the hashes in order. @throws the first error */
  async #hgetalls(keys: readonly string[]): Promise<Record<string, string>[]> {
    if (keys.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.hgetall(key);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, value]) => {
      if (error !== null) throw error;
      return value as Record<string, string>;
    });
  }
}
