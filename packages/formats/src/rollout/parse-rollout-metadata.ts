import {
  RolloutMetadataSchema,
  RolloutMetadataV2Schema,
  type RolloutFormatVersion,
  type RolloutMetadata,
} from './rollout-metadata.js';
import { firstIssue, rolloutInvalid } from './rollout-error.js';

/**
 * Checks a metadata record against the schema of its format version (v2: v1's plus the required
 * `video`), keeping added optional fields.
 * @throws FMT_ROLLOUT_INVALID rollout-schema, with `details.path`
 */
export function parseRolloutMetadata(
  value: unknown,
  version: RolloutFormatVersion = '1',
): RolloutMetadata {
  const schema = version === '2' ? RolloutMetadataV2Schema : RolloutMetadataSchema;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, message } = firstIssue(parsed.error.issues);
  throw rolloutInvalid('rollout-schema', `__metadata__.rollout ${path}: ${message}`, { path });
}

/** The format version a record is written in: v2 when it has v2's `video` key, else v1. */
export function rolloutFormatVersionOf(metadata: object): RolloutFormatVersion {
  return Object.hasOwn(metadata, 'video') ? '2' : '1';
}
