import { createHash } from 'node:crypto';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { checkWeightsAgainstConfig, decodeWeights } from '@flowfleet/models';
import type { TensorData } from '@flowfleet/platform';

/** What a sync promises about its blob. */
export interface ExpectedBlob {
  readonly component: string;
  readonly version: number;
  readonly sha256: string;
  readonly sizeBytes: number;
}

/** Which check a refused blob failed. */
export type RefusalReason = 'size' | 'sha256' | 'safetensors' | 'tensors';

function refuse(
  expected: ExpectedBlob,
  reason: RefusalReason,
  message: string,
  extra: Record<string, unknown> = {},
  cause?: unknown,
): FlowfleetError {
  return new FlowfleetError(
    'WORKER_BLOB_REFUSED',
    `${expected.component} v${expected.version}: ${message}`,
    {
      details: { component: expected.component, version: expected.version, reason, ...extra },
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/**
 * Verifies a downloaded weights blob against its sync and the card: size, sha256, a well-formed
 * safetensors file, and exactly the component's tensor names and shapes (float32 after decoding).
 * Returns the decoded tensors; nothing is staged when any check fails.
 * @throws FlowfleetError WORKER_BLOB_REFUSED with `details.reason` naming the failed check
 */
export function verifyWeightsBlob(
  bytes: Uint8Array,
  expected: ExpectedBlob,
  shapes: ReadonlyMap<string, readonly number[]>,
): Map<string, TensorData> {
  if (bytes.byteLength !== expected.sizeBytes) {
    throw refuse(
      expected,
      'size',
      `blob is ${bytes.byteLength} bytes, the sync says ${expected.sizeBytes}`,
      {
        sizeBytes: bytes.byteLength,
        expectedSizeBytes: expected.sizeBytes,
      },
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== expected.sha256) {
    throw refuse(
      expected,
      'sha256',
      `blob sha256 ${sha256} does not match the sync's ${expected.sha256}`,
      {
        sha256,
        expectedSha256: expected.sha256,
      },
    );
  }
  let tensors: Map<string, TensorData>;
  try {
    tensors = decodeWeights(bytes).tensors;
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    throw refuse(
      expected,
      'safetensors',
      `not a valid safetensors file (${error.message})`,
      {},
      error,
    );
  }
  try {
    checkWeightsAgainstConfig(tensors, shapes);
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    throw refuse(expected, 'tensors', error.message, { mismatch: error.details }, error);
  }
  return tensors;
}
