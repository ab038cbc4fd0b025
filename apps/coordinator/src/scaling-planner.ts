import {
  WorkerManifestSchema,
  platformReasons,
  deviceClassOf,
  manifestSatisfies,
  type ClassScaling,
  type LaneCapacity,
  type Requirements,
  type Scaling,
  type WorkerManifest,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { WorkerView } from './fleet-reader.js';
import type { CoordinatorKeys } from './keys.js';
import { boundsFor, configuredClasses, type ScalingClasses } from './scaling-config.js';
import { SCALING_RULE, planScaling, type ClassFacts, type LaneDemand } from './scaling-rule.js';

/** What the planner needs. */
export interface ScalingPlannerOptions {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly logger: Logger;
  /** Bounds per class (`FLOWFLEET_SCALING_CLASSES`); default none (0..32 for every class). */
  readonly classes?: ScalingClasses;
}

/** How the planner decides which lanes a class can serve. */
type ClassMatcher =
  | { readonly source: 'live'; readonly manifests: readonly WorkerManifest[] }
  | { readonly source: 'remembered'; readonly manifests: readonly WorkerManifest[] }
  | { readonly source: 'configured'; readonly device: string; readonly arch: string };

function canServe(matcher: ClassMatcher, requirements: Requirements): boolean {
  // A configured class never seen live is matched on its platform alone (device, minArch, adapter).
  if (matcher.source === 'configured') return platformReasons(matcher, requirements).length === 0;
  return matcher.manifests.some((manifest) => manifestSatisfies(manifest, requirements).ok);
}

/** What is remembered of a class: its newest live worker's manifest, without the weights. */
function rememberedText(manifests: readonly WorkerManifest[]): string {
  const newest = [...manifests].sort((a, b) =>
    a.startedAt !== b.startedAt
      ? a.startedAt < b.startedAt
        ? 1
        : -1
      : a.workerId < b.workerId
        ? -1
        : 1,
  )[0] as WorkerManifest;
  return JSON.stringify({ ...newest, weights: {} });
}

/**
 * The manifests of `views` that differ in what matching reads (platform, kernels, models): the
 * workers of one Deployment advertise the same, so a class is matched once, not once per worker.
 */
function distinctCapabilities(views: readonly WorkerView[]): WorkerManifest[] {
  const distinct = new Map<string, WorkerManifest>();
  for (const { manifest } of views) {
    const key = JSON.stringify([manifest.platform, manifest.kernels, manifest.models]);
    if (!distinct.has(key)) distinct.set(key, manifest);
  }
  return [...distinct.values()];
}

const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

/**
 * Answers `GET /v1/scaling` and the scaling gauges: groups live workers by device class, decides
 * which known classes can serve each lane, and applies the rule (`scaling-rule.ts`). Known classes
 * are the live ones, the remembered ones (the last manifest seen per class, kept in Redis so a
 * class scaled to zero can still be scaled up for the lanes it serves) and the configured ones.
 */
export class ScalingPlanner {
  readonly #options: ScalingPlannerOptions;
  readonly #classes: ScalingClasses;

  constructor(options: ScalingPlannerOptions) {
    this.#options = options;
    this.#classes = options.classes ?? {};
  }

  /** Whether `deviceClass` is configured (known even with no worker ever seen). */
  isConfigured(deviceClass: string): boolean {
    return configuredClasses(this.#classes).includes(deviceClass);
  }

  /**
   * The scaling hints of every known class, from the fleet's workers and lanes (with backlog).
   * Updates the remembered manifest of every live class whose newest manifest changed.
   */
  async plan(workers: readonly WorkerView[], lanes: readonly LaneCapacity[]): Promise<Scaling> {
    const live = new Map<string, WorkerView[]>();
    for (const worker of workers) {
      if (!worker.alive) continue;
      const deviceClass = deviceClassOf(worker.manifest.platform);
      live.set(deviceClass, [...(live.get(deviceClass) ?? []), worker]);
    }
    const remembered = await this.#remember(live);
    const matchers = new Map<string, ClassMatcher>();
    for (const [deviceClass, views] of live) {
      matchers.set(deviceClass, { source: 'live', manifests: distinctCapabilities(views) });
    }
    for (const [deviceClass, manifest] of remembered) {
      if (!matchers.has(deviceClass)) {
        matchers.set(deviceClass, { source: 'remembered', manifests: [manifest] });
      }
    }
    for (const deviceClass of configuredClasses(this.#classes)) {
      if (matchers.has(deviceClass)) continue;
      const slash = deviceClass.indexOf('/');
      matchers.set(deviceClass, {
        source: 'configured',
        device: deviceClass.slice(0, slash),
        arch: deviceClass.slice(slash + 1),
      });
    }
    const facts = [...matchers.keys()].sort().map((deviceClass): ClassFacts => {
      const views = live.get(deviceClass) ?? [];
      const bounds = boundsFor(this.#classes, deviceClass);
      const concurrency =
        views.length > 0
          ? Math.max(...views.map((view) => view.manifest.concurrency))
          : remembered.get(deviceClass)?.concurrency;
      const active = views.map((view) => view.heartbeat?.activeJobs ?? 0);
      return {
        deviceClass,
        workers: views.length,
        capacity: views.reduce((sum, view) => sum + view.manifest.concurrency, 0),
        busy: active.reduce((sum, jobs) => sum + jobs, 0),
        busyWorkers: active.filter((jobs) => jobs > 0).length,
        jobsPerReplica: bounds.jobsPerReplica ?? concurrency ?? 1,
        minReplicas: bounds.minReplicas,
        maxReplicas: bounds.maxReplicas,
      };
    });
    const demands: LaneDemand[] = lanes.map((lane) => ({
      lane: lane.lane,
      backlog: lane.backlog,
      classes: [...matchers]
        .filter(([, matcher]) => canServe(matcher, lane.requirements))
        .map(([deviceClass]) => deviceClass),
    }));
    const plan = planScaling(facts, demands);
    const classes = plan.classes.map((entry): ClassScaling => ({
      deviceClass: entry.deviceClass,
      workers: entry.workers,
      capacity: entry.capacity,
      busy: entry.busy,
      exclusiveBacklog: entry.exclusiveBacklog,
      sharedBacklog: entry.sharedBacklog,
      sharedAssigned: round6(entry.sharedAssigned),
      jobsPerReplica: entry.jobsPerReplica,
      desiredReplicas: entry.desiredReplicas,
      minReplicas: entry.minReplicas,
      maxReplicas: entry.maxReplicas,
      source: (matchers.get(entry.deviceClass) as ClassMatcher).source,
    }));
    return { classes, unservedBacklog: plan.unservedBacklog, rule: SCALING_RULE };
  }

  /**
   * Reads the remembered manifests (validated: Redis data is untrusted) and records the newest
   * manifest of each live class where it changed. Returns class → remembered manifest.
   */
  async #remember(live: ReadonlyMap<string, WorkerView[]>): Promise<Map<string, WorkerManifest>> {
    const { redis, keys, logger } = this.#options;
    const stored = await redis.hgetall(keys.scalingClasses);
    const remembered = new Map<string, WorkerManifest>();
    for (const [deviceClass, text] of Object.entries(stored)) {
      const parsed = parseRedisJson(WorkerManifestSchema, text);
      if (parsed.success && deviceClassOf(parsed.data.platform) === deviceClass) {
        remembered.set(deviceClass, parsed.data);
      } else {
        logger.warn({ deviceClass }, 'ignoring a malformed remembered class manifest');
      }
    }
    const changed: string[] = [];
    for (const [deviceClass, views] of live) {
      const text = rememberedText(views.map((view) => view.manifest));
      if (stored[deviceClass] !== text) changed.push(deviceClass, text);
    }
    if (changed.length > 0) await redis.hset(keys.scalingClasses, ...changed);
    return remembered;
  }
}
