import { RolloutMetadataSchema, type RolloutMetadata } from './rollout-metadata.js';
import { firstIssue, rolloutInvalid } from './rollout-error.js';

/**
 * Checks a metadata record against the v1 schema, keeping added optional fields.
 * @throws FMT_ROLLOUT_INVALID rollout-schema, with `details.path`
 */
export function parseRolloutMetadata(value: unknown): RolloutMetadata {
  const parsed = RolloutMetadataSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, message } = firstIssue(parsed.error.issues);
  throw rolloutInvalid('rollout-schema', `__metadata__.rollout ${path}: ${message}`, { path });
}
