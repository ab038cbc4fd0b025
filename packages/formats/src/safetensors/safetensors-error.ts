import { FlowfleetError } from '@flowfleet/errors';

/**
 * Why a safetensors file or a tensor given to the writer was refused: the `details.reason` of
 * FMT_SAFETENSORS_INVALID. The ids are part of docs/formats/rollout-file-v1.md (§ Refusals), so
 * a reader in another language reports the same ones.
 */
export type SafetensorsInvalidReason =
  | 'too-short'
  | 'header-too-large'
  | 'header-out-of-bounds'
  | 'header-not-utf8'
  | 'header-not-json'
  | 'header-not-object'
  | 'duplicate-key'
  | 'empty-name'
  | 'metadata-not-strings'
  | 'entry-invalid'
  | 'unsupported-dtype'
  | 'invalid-shape'
  | 'invalid-offsets'
  | 'size-mismatch'
  | 'gap'
  | 'overlap'
  | 'truncated'
  | 'trailing-bytes'
  | 'invalid-bool'
  | 'unknown-tensor'
  | 'reserved-name'
  | 'wrong-array';

/** The details of FMT_SAFETENSORS_INVALID: the rule broken, plus facts about where. */
export interface SafetensorsInvalidDetails {
  readonly reason: SafetensorsInvalidReason;
  readonly [fact: string]: unknown;
}

/** A FMT_SAFETENSORS_INVALID error for `reason`. */
export function safetensorsInvalid(
  reason: SafetensorsInvalidReason,
  message: string,
  facts: Readonly<Record<string, unknown>> = {},
  cause?: unknown,
): FlowfleetError<'FMT_SAFETENSORS_INVALID', SafetensorsInvalidDetails> {
  return new FlowfleetError('FMT_SAFETENSORS_INVALID', `invalid safetensors: ${message}`, {
    details: { ...facts, reason },
    ...(cause === undefined ? {} : { cause }),
  });
}
