import {
  WeightVersionRecordSchema,
  type WeightVersionRecord,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { BlobStore } from '../blob-store.js';
import type { CoordinatorKeys } from '../keys.js';
import { planWeightGc, type ComponentVersions, type WeightGcPlan } from './weight-gc-plan.js';

// KEYS: the weights hash, then one acks hash per version in ARGV. Forgets each version that is
// still below the latest one (versions only grow, so it can never become the latest again).
const FORGET_VERSIONS = `
local latest = tonumber(redis.call('HGET', KEYS[1], 'latest') or '0')
local forgotten = 0
for i, version in ipairs(ARGV) do
  if tonumber(version) < latest then
    forgotten = forgotten + redis.call('HDEL', KEYS[1], 'v:' .. version)
    redis.call('DEL', KEYS[i + 1])
  end
end
return forgotten`;

/** What the weight collector reads and deletes through (narrow, so tests pass plain objects). */
export interface WeightGcContext {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly blobs: BlobStore;
  readonly logger: Logger;
  /** Versions live workers hold, per component. */
  heldVersions(): Promise<Map<string, Set<number>>>;
  /** Versions queued or running jobs require exactly, per component. */
  pinnedVersions(): Promise<Map<string, Set<number>>>;
  readonly versionsKept: number;
  readonly graceMs: number;
}

/** What one collection did. */
export interface WeightGcReport {
  readonly forgottenVersions: number;
  readonly deletedBlobs: number;
  readonly freedBytes: number;
}

/** Every component's latest version and version records (unreadable ones as undefined). */
export async function readComponentVersions(
  redis: RedisClient,
  keys: CoordinatorKeys,
): Promise<Map<string, ComponentVersions>> {
  const components = (await redis.smembers(keys.weightComponents)).sort();
  const result = new Map<string, ComponentVersions>();
  for (const component of components) {
    const fields = await redis.hgetall(keys.weights(component));
    const records = new Map<number, WeightVersionRecord | undefined>();
    for (const [field, text] of Object.entries(fields)) {
      if (!field.startsWith('v:')) continue;
      const version = Number(field.slice(2));
      if (!Number.isSafeInteger(version) || version < 1) continue;
      const parsed = parseRedisJson(WeightVersionRecordSchema, text);
      records.set(version, parsed.success ? parsed.data : undefined);
    }
    const latest = Number(fields['latest']);
    result.set(component, { latest: Number.isSafeInteger(latest) ? latest : 0, records });
  }
  return result;
}

/** True when some record could not be read: its blobs are unknown, so none may be deleted. */
function hasUnreadable(components: ReadonlyMap<string, ComponentVersions>): boolean {
  for (const { records } of components.values()) {
    for (const record of records.values()) if (record === undefined) return true;
  }
  return false;
}

/**
 * Forgets superseded weight versions (their record and acks) by {@link planWeightGc}'s rules,
 * then deletes every blob older than the grace that no remaining version names — the blobs of
 * forgotten versions and uploads never synced. Blobs are judged on the records as they stand
 * after the forgetting (read again), so a version synced meanwhile keeps its blobs.
 */
export async function collectWeights(ctx: WeightGcContext, nowMs: number): Promise<WeightGcReport> {
  const [components, held, pinned] = await Promise.all([
    readComponentVersions(ctx.redis, ctx.keys),
    ctx.heldVersions(),
    ctx.pinnedVersions(),
  ]);
  const plan: WeightGcPlan = planWeightGc({
    components,
    held,
    pinned,
    nowMs,
    versionsKept: ctx.versionsKept,
    graceMs: ctx.graceMs,
  });
  let forgottenVersions = 0;
  const byComponent = new Map<string, number[]>();
  for (const { component, version } of plan.drop) {
    byComponent.set(component, [...(byComponent.get(component) ?? []), version]);
  }
  for (const [component, versions] of byComponent) {
    const acks = versions.map((version) => ctx.keys.acks(component, version));
    forgottenVersions += (await ctx.redis.eval(
      FORGET_VERSIONS,
      1 + acks.length,
      ctx.keys.weights(component),
      ...acks,
      ...versions.map(String),
    )) as number;
  }
  const remaining = await readComponentVersions(ctx.redis, ctx.keys);
  if (hasUnreadable(remaining)) {
    ctx.logger.warn('a weight version record is unreadable: no blob is deleted this sweep');
    return { forgottenVersions, deletedBlobs: 0, freedBytes: 0 };
  }
  const referenced = planWeightGc({
    components: remaining,
    held,
    pinned,
    nowMs,
    versionsKept: Number.MAX_SAFE_INTEGER,
    graceMs: ctx.graceMs,
  }).referencedBlobs;
  let deletedBlobs = 0;
  let freedBytes = 0;
  for await (const blob of ctx.blobs.listBlobs()) {
    if (referenced.has(blob.name) || nowMs - blob.storedAtMs < ctx.graceMs) continue;
    await ctx.blobs.deleteBlob(blob.name);
    deletedBlobs += 1;
    freedBytes += blob.sizeBytes;
  }
  if (forgottenVersions > 0 || deletedBlobs > 0) {
    ctx.logger.info(
      { forgottenVersions, deletedBlobs, freedBytes, kept: summarizeKept(plan) },
      'collected superseded weight versions',
    );
  }
  return { forgottenVersions, deletedBlobs, freedBytes };
}

function summarizeKept(plan: WeightGcPlan): Record<string, Record<string, string>> {
  const summary: Record<string, Record<string, string>> = {};
  for (const [component, kept] of plan.kept) {
    summary[component] = Object.fromEntries([...kept].map(([v, reason]) => [String(v), reason]));
  }
  return summary;
}
