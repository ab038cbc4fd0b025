import { DeviceClassSchema } from '@flowfleet/protocol';
import { z } from 'zod';

/** The bounds of one class, or the defaults (`*`); unset fields fall back to the defaults. */
const ClassBoundsSchema = z.strictObject({
  minReplicas: z.int().min(0).optional(),
  maxReplicas: z.int().min(1).optional(),
  /** Jobs one replica is sized for; default: the class's worker concurrency. */
  jobsPerReplica: z.int().min(1).optional(),
});

/** The defaults of every class without its own entry (the contract's 0 and 32). */
export const DEFAULT_CLASS_BOUNDS = Object.freeze({ minReplicas: 0, maxReplicas: 32 });

/** One class's resolved bounds. */
export interface ClassBounds {
  readonly minReplicas: number;
  readonly maxReplicas: number;
  /** Undefined: use the class's worker concurrency. */
  readonly jobsPerReplica?: number;
}

/**
 * `FLOWFLEET_SCALING_CLASSES`: a JSON object from device class (or `*`, the defaults) to
 * `{minReplicas?, maxReplicas?, jobsPerReplica?}`. A listed class is known even before any of its
 * workers registered (scale-from-zero on a first deploy). Each class's resolved
 * minReplicas must not exceed its maxReplicas.
 */
export const ScalingClassesSchema = z
  .record(z.union([z.literal('*'), DeviceClassSchema]), ClassBoundsSchema, {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? `a key is a device class <device>/<arch> (e.g. cuda/sm90) or "*", got ${JSON.stringify(issue.input)}`
        : undefined,
  })
  .superRefine((config, context) => {
    for (const deviceClass of Object.keys(config)) {
      const bounds = boundsFor(config, deviceClass);
      if (bounds.minReplicas > bounds.maxReplicas) {
        context.addIssue({
          code: 'custom',
          path: [deviceClass],
          message: `minReplicas ${bounds.minReplicas} exceeds maxReplicas ${bounds.maxReplicas}`,
        });
      }
    }
  });
/** The scaling configuration by device class. */
export type ScalingClasses = z.infer<typeof ScalingClassesSchema>;

/** The env variable's text → the configuration (JSON first, then the schema). */
export const ScalingClassesJsonSchema = z
  .string()
  .transform((text, context): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      context.addIssue({ code: 'custom', message: 'not JSON' });
      return z.NEVER;
    }
  })
  .pipe(ScalingClassesSchema);

/** The bounds of `deviceClass`: its own entry over the `*` entry over DEFAULT_CLASS_BOUNDS. */
export function boundsFor(config: ScalingClasses, deviceClass: string): ClassBounds {
  const own = config[deviceClass] ?? {};
  const defaults = config['*'] ?? {};
  const jobsPerReplica = own.jobsPerReplica ?? defaults.jobsPerReplica;
  return {
    minReplicas: own.minReplicas ?? defaults.minReplicas ?? DEFAULT_CLASS_BOUNDS.minReplicas,
    maxReplicas: own.maxReplicas ?? defaults.maxReplicas ?? DEFAULT_CLASS_BOUNDS.maxReplicas,
    ...(jobsPerReplica !== undefined ? { jobsPerReplica } : {}),
  };
}

/** The classes the configuration names (not `*`), sorted. */
export function configuredClasses(config: ScalingClasses): string[] {
  return Object.keys(config)
    .filter((key) => key !== '*')
    .sort();
}
