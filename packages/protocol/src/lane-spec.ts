import { z } from 'zod';
import { TimestampSchema } from './atoms.js';
import { laneForRequirements, RequirementsSchema } from './requirements.js';

/**
 * A lane as the coordinator records it. The name must be the hash of the requirements, so a
 * corrupted or hand-edited record cannot route jobs to workers that do not satisfy them.
 */
export const LaneSpecSchema = z
  .object({
    lane: z.string().regex(/^lane-[0-9a-f]{16}$/, 'a lane name is lane-<16 hex digits>'),
    requirements: RequirementsSchema,
    createdAt: TimestampSchema,
  })
  .refine((spec) => spec.lane === laneForRequirements(spec.requirements), {
    message: 'the lane name is not the hash of its requirements',
    path: ['lane'],
  });
/** A lane as the coordinator records it. */
export type LaneSpec = z.infer<typeof LaneSpecSchema>;
