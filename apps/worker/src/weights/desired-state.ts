import {
  FANOUT_PLAN_TTL_MS,
  WeightVersionRecordSchema,
  type FanoutPlan,
  type FleetKeys,
  type ResolvedWeightRequirement,
  type WeightVersionRecord,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';

/** One `v:<n>` field of a weights hash: its record, or why it cannot be read. */
export type VersionEntry =
  { readonly record: WeightVersionRecord } | { readonly unreadable: string };

/**
 * A component's desired state (ADR 012): the newest synced version and every version the
 * coordinator records, each with its manifest, LoRA base and fan-out plan — all of it one hash.
 */
export interface DesiredState {
  readonly latest: number;
  readonly versions: ReadonlyMap<number, VersionEntry>;
}

function parseRecord(text: string): VersionEntry {
  const parsed = parseRedisJson(WeightVersionRecordSchema, text);
  if (parsed.success) return { record: parsed.data };
  const issue = parsed.error.issues[0];
  if (issue?.message === 'not JSON') return { unreadable: 'its record is not JSON' };
  return {
    unreadable: `its record does not parse (${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}; a record from before manifests is not loaded)`,
  };
}

/**
 * Reads the desired state of `component` in one round trip (`HGETALL` of its weights hash). The
 * records are untrusted Redis data: each is parsed, and one that does not parse is named so.
 */
export async function readDesiredState(
  redis: RedisClient,
  keys: FleetKeys,
  component: string,
): Promise<DesiredState> {
  const fields = await redis.hgetall(keys.weights(component));
  const latestValue = Number(fields['latest']);
  const versions = new Map<number, VersionEntry>();
  for (const [field, text] of Object.entries(fields)) {
    if (!field.startsWith('v:')) continue;
    const version = Number(field.slice(2));
    if (Number.isSafeInteger(version) && version > 0) versions.set(version, parseRecord(text));
  }
  return {
    latest: Number.isSafeInteger(latestValue) && latestValue > 0 ? latestValue : 0,
    versions,
  };
}

/** The readable record of `version`, if any. */
export function recordOf(state: DesiredState, version: number): WeightVersionRecord | undefined {
  const entry = state.versions.get(version);
  return entry !== undefined && 'record' in entry ? entry.record : undefined;
}

/** A record's fan-out plan while it is fresh (a worker loading the version later uses the coordinator). */
export function freshPlan(record: WeightVersionRecord, nowMs: number): FanoutPlan | undefined {
  if (record.plan === undefined || record.at === undefined) return undefined;
  return nowMs - Date.parse(record.at) < FANOUT_PLAN_TTL_MS ? record.plan : undefined;
}

/**
 * The version to load next over `held` (level-triggered: decided from the whole state every
 * time), or undefined when there is none: the smallest version a waiting job requires exactly
 * (versions only increase, so the next one after it stays reachable), else the newest synced
 * version. Versions refused here are passed over (the next older one is the candidate).
 */
export function nextVersion(
  state: DesiredState,
  held: number,
  awaited: readonly ResolvedWeightRequirement[],
  isRefused: (version: number) => boolean,
): number | undefined {
  const candidates = [...state.versions.keys()]
    .filter((version) => version > held && !isRefused(version))
    .sort((a, b) => a - b);
  const exact = awaited
    .flatMap((requirement) => ('exact' in requirement ? [requirement.exact] : []))
    .filter((version) => candidates.includes(version))
    .sort((a, b) => a - b);
  return exact[0] ?? candidates.at(-1);
}
