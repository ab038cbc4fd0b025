import { FlowfleetError } from '@flowfleet/errors';

/**
 * Why a rollout record, file or summary was refused: the `details.reason` of
 * FMT_ROLLOUT_INVALID (docs/formats/rollout-file-v1.md and -v2.md § 7).
 */
export type RolloutInvalidReason =
  | 'not-rollout'
  | 'unsupported-version'
  | 'metadata-keys'
  | 'rollout-not-json'
  | 'rollout-schema'
  | 'missing-tensor'
  | 'unexpected-tensor'
  | 'tensor-dtype'
  | 'tensor-shape'
  | 'non-finite'
  | 'seed-range'
  | 'latent-steps'
  | 'frame-indices'
  | 'summary-schema';

/** The details of FMT_ROLLOUT_INVALID: the rule broken, plus facts about where. */
export interface RolloutInvalidDetails {
  readonly reason: RolloutInvalidReason;
  readonly [fact: string]: unknown;
}

/** A FMT_ROLLOUT_INVALID error for `reason`. */
export function rolloutInvalid(
  reason: RolloutInvalidReason,
  message: string,
  facts: Readonly<Record<string, unknown>> = {},
  cause?: unknown,
): FlowfleetError<'FMT_ROLLOUT_INVALID', RolloutInvalidDetails> {
  return new FlowfleetError('FMT_ROLLOUT_INVALID', `invalid rollout file: ${message}`, {
    details: { ...facts, reason },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** `path: message` of a zod issue list's first issue, for a one-line error. */
export function firstIssue(issues: readonly { path: PropertyKey[]; message: string }[]): {
  path: string;
  message: string;
} {
  const issue = issues[0];
  return {
    path:
      issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.'),
    message: issue?.message ?? 'invalid',
  };
}
