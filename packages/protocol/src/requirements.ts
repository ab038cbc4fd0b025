import { createHash } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import { canonicalJson } from '@flowfleet/formats';
import { z } from 'zod';
import { AdapterSchema, MinArchSchema, type MinArch } from './arch.js';
import { ComponentIdSchema, DeviceSchema, ModelIdSchema, OpIdSchema } from './atoms.js';
import type { RolloutRequest } from './rollout-request.js';

/**
 * What a worker must offer to serve a job: the capability half of a job's needs. Weight versions
 * are deliberately not here (see README "Lanes"): a worker on an older version syncs first rather
 * than being ineligible, so the weight requirement travels in the job, not in the lane.
 */
export const RequirementsSchema = z.strictObject({
  model: ModelIdSchema,
  /** Kernel ops the rollout dispatches (solver ops plus any model-level ops of the card). */
  ops: z.array(OpIdSchema).min(1),
  /** Component kinds the model builds. */
  components: z.array(ComponentIdSchema),
  /** Devices the job may run on. */
  devices: z.array(DeviceSchema).min(1),
  /** Minimum arch per device (entries for devices not allowed are dropped in canonical form). */
  minArch: MinArchSchema,
  /** Which adapters the job accepts; absent (canonical form of `any`) means any. */
  adapter: AdapterSchema.optional(),
  dtype: z.enum(['float32']),
});
/** What a worker must offer to serve a job. */
export type Requirements = z.infer<typeof RequirementsSchema>;

/**
 * What the request's model card says a rollout of it needs (the models package's
 * `CardRegistry.capabilities` computes it; this package names no model).
 */
export interface ModelCapabilities {
  /** Every kernel op the card's loop dispatches for this request (solver and model-level). */
  readonly ops: readonly string[];
  /** The card's component kinds. */
  readonly componentKinds: readonly string[];
}

/** Prefix of every lane name (BullMQ queue names cannot contain ':'). */
export const LANE_PREFIX = 'lane-';

// Bumped whenever the canonical form changes meaning, so old and new lanes never collide.
const HASH_DOMAIN = 'flowfleet.requirements.v1\n';
const HASH_HEX_CHARS = 16;

function sortedUnique<T extends string>(values: readonly T[]): T[] {
  return [...new Set(values)].sort();
}

/**
 * Requirements in canonical form: arrays sorted and deduplicated, minArch kept only for allowed
 * devices and without `generic` (which means "any"), `adapter` only when it is not `any` (so
 * lanes of jobs that never name it keep their hash), keys in a fixed order. Idempotent.
 */
export function canonicalRequirements(requirements: Requirements): Requirements {
  const devices = sortedUnique(requirements.devices);
  const minArch: MinArch = {};
  const cpu = requirements.minArch.cpu;
  const cuda = requirements.minArch.cuda;
  if (cpu !== undefined && cpu !== 'generic' && devices.includes('cpu')) minArch.cpu = cpu;
  if (cuda !== undefined && devices.includes('cuda')) minArch.cuda = cuda;
  return {
    model: requirements.model,
    ops: sortedUnique(requirements.ops),
    components: sortedUnique(requirements.components),
    devices,
    minArch,
    ...(requirements.adapter === undefined || requirements.adapter === 'any'
      ? {}
      : { adapter: requirements.adapter }),
    dtype: requirements.dtype,
  };
}

/**
 * The canonical requirements of a parsed rollout request: the ops and component kinds its model
 * card derived for it, the allowed devices, minArch, the adapters it accepts and dtype `float32`.
 */
export function requirementsFor(
  request: Pick<RolloutRequest, 'model' | 'constraints'>,
  model: ModelCapabilities,
): Requirements {
  return canonicalRequirements({
    model: request.model,
    ops: [...model.ops],
    components: [...model.componentKinds],
    devices: request.constraints.devices,
    minArch: request.constraints.minArch,
    adapter: request.constraints.adapter,
    dtype: 'float32',
  });
}

/** The first 16 hex digits of the sha256 of the canonical requirements' JSON. */
export function requirementsHash(requirements: Requirements): string {
  return createHash('sha256')
    .update(HASH_DOMAIN + canonicalJson(canonicalRequirements(requirements)))
    .digest('hex')
    .slice(0, HASH_HEX_CHARS);
}

/**
 * The lane (BullMQ queue) name for a requirements hash: `lane-<hash>`.
 * @throws FlowfleetError PROTO_INVALID_LANE when `hash` is not 16 lowercase hex digits
 */
export function laneName(hash: string): string {
  if (!/^[0-9a-f]{16}$/.test(hash)) {
    throw new FlowfleetError('PROTO_INVALID_LANE', `a lane hash is 16 lowercase hex digits`, {
      details: { hash },
    });
  }
  return LANE_PREFIX + hash;
}

/** The lane that serves jobs with these requirements. */
export function laneForRequirements(requirements: Requirements): string {
  return laneName(requirementsHash(requirements));
}

/** True when `name` has the form of a lane name. */
export function isLaneName(name: string): boolean {
  return /^lane-[0-9a-f]{16}$/.test(name);
}
