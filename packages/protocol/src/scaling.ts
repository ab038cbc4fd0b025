import { z } from 'zod';
import { DEVICES } from './atoms.js';
import type { PlatformFacts } from './worker-manifest.js';

const DEVICE_CLASS = new RegExp(`^(${DEVICES.join('|')})/[A-Za-z0-9._-]{1,64}$`);

/**
 * A device class: a worker's platform signature `<device>/<arch>` (e.g. `cuda/sm90`,
 * `cpu/x86-64-v3`), the unit autoscaling works in (one worker Deployment per class).
 */
export const DeviceClassSchema = z
  .string()
  .regex(DEVICE_CLASS, 'a device class is <device>/<arch>, e.g. cuda/sm90 or cpu/x86-64-v3');
/** A device class, e.g. `cuda/sm90`. */
export type DeviceClass = z.infer<typeof DeviceClassSchema>;

/** The device class of a worker's platform facts: `<device>/<arch>`. */
export function deviceClassOf(platform: Pick<PlatformFacts, 'device' | 'arch'>): string {
  return `${platform.device}/${platform.arch}`;
}

const Count = z.int().min(0);

/** One device class in `GET /v1/scaling` (the fields the KEDA manifests read are stable). */
export const ClassScalingSchema = z.object({
  deviceClass: DeviceClassSchema,
  /** Live workers of the class. */
  workers: Count,
  /** Rollout slots of those workers (sum of their concurrency). */
  capacity: Count,
  /** Rollouts running on them now (sum of their heartbeats' activeJobs). */
  busy: Count,
  /** Jobs waiting (waiting + prioritized + delayed) on lanes no other known class can serve. */
  exclusiveBacklog: Count,
  /** Jobs waiting on lanes this class and at least one other known class can serve. */
  sharedBacklog: Count,
  /** The part of `sharedBacklog` the rule counts for this class (split by live capacity). */
  sharedAssigned: z.number().min(0),
  /** Jobs one replica is sized for (its worker concurrency unless configured). */
  jobsPerReplica: z.int().min(1),
  /** The rule's answer: how many workers of this class the fleet should run. */
  desiredReplicas: Count,
  minReplicas: Count,
  maxReplicas: z.int().min(1),
  /** Where the class is known from: live workers, a remembered manifest, or configuration only. */
  source: z.enum(['live', 'remembered', 'configured']),
});
/** One device class's scaling facts and hint. */
export type ClassScaling = z.infer<typeof ClassScalingSchema>;

/** `GET /v1/scaling`. */
export const ScalingSchema = z.object({
  classes: z.array(ClassScalingSchema),
  /** Jobs waiting on lanes no known class can serve (no class scales up for them). */
  unservedBacklog: Count,
  /** One line naming the rule that computed `desiredReplicas`. */
  rule: z.string(),
});
/** Scaling hints per device class. */
export type Scaling = z.infer<typeof ScalingSchema>;
