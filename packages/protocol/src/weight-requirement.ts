import { z } from 'zod';
import { ComponentIdSchema, MAX_WEIGHT_VERSION, SyncedVersionSchema } from './atoms.js';

const VersionAtLeastOne = SyncedVersionSchema;

/** A requirement a worker can check on its own: at least version `min`, or exactly `exact`. */
export const ResolvedWeightRequirementSchema = z.union([
  z.strictObject({ min: VersionAtLeastOne }),
  z.strictObject({ exact: VersionAtLeastOne }),
]);
/** A requirement a worker checks on its own. */
export type ResolvedWeightRequirement = z.infer<typeof ResolvedWeightRequirementSchema>;

/**
 * What a job needs of one component's weights: at least version `min`, exactly `exact`, or at
 * most `maxStaleness` versions older than the component's current version when it is enqueued
 * (the coordinator turns that into a `min` at enqueue: 0 is on-policy, the current version).
 */
export const WeightRequirementSchema = z.union([
  ...ResolvedWeightRequirementSchema.options,
  z.strictObject({ maxStaleness: z.int().min(0).max(MAX_WEIGHT_VERSION) }),
]);
/** What a job needs of one component's weights. */
export type WeightRequirement = z.infer<typeof WeightRequirementSchema>;

/** Weight requirements by component id; an absent component runs on whatever the worker holds. */
export const WeightRequirementsSchema = z.record(ComponentIdSchema, WeightRequirementSchema);
/** Weight requirements by component id. */
export type WeightRequirements = z.infer<typeof WeightRequirementsSchema>;

/** Requirements as a job carries them: every `maxStaleness` already turned into a `min`. */
export const ResolvedWeightRequirementsSchema = z.record(
  ComponentIdSchema,
  ResolvedWeightRequirementSchema,
);
/** Requirements as a job carries them. */
export type ResolvedWeightRequirements = z.infer<typeof ResolvedWeightRequirementsSchema>;

/** One component whose held version does not meet a job's requirement. */
export interface UnmetWeight {
  readonly component: string;
  /** The version the worker holds; `null` when it holds none for that component. */
  readonly held: number | null;
  readonly required: ResolvedWeightRequirement;
}

/** True when version `held` meets `requirement`. */
export function isWeightRequirementMet(
  held: number | undefined,
  requirement: ResolvedWeightRequirement,
): boolean {
  if (held === undefined) return false;
  return 'exact' in requirement ? held === requirement.exact : held >= requirement.min;
}

/**
 * The components whose held version misses the job's requirement, sorted by component id. A
 * worker syncs these before it starts the job (it never runs on older weights than required);
 * an empty list means it may start now.
 */
export function unmetWeights(
  held: Readonly<Record<string, number>>,
  required: ResolvedWeightRequirements,
): UnmetWeight[] {
  return Object.keys(required)
    .sort()
    .flatMap((component) => {
      const requirement = required[component];
      if (requirement === undefined) return [];
      const version = held[component];
      return isWeightRequirementMet(version, requirement)
        ? []
        : [{ component, held: version ?? null, required: requirement }];
    });
}
