import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { OnnxForm } from '../../onnx/onnx-form.js';

/**
 * Options of `buildDitOnnx` / `buildTextEncoderOnnx`: the form, and for `captured` the weights and
 * the fixed dims (the card's ONNX artifacts derive them from a forward's input dims).
 */
export interface OnnxBuildOptions {
  readonly form: OnnxForm;
  /** The component's weights by state_dict name; required for `captured`, ignored for `eager`. */
  readonly weights?: ReadonlyMap<string, TensorData>;
  /** Fixed batch size; required for `captured`. */
  readonly batch?: number;
  /** Fixed latent frames F; required for a captured DiT. */
  readonly frames?: number;
  /** Fixed latent height H; required for a captured DiT. */
  readonly height?: number;
  /** Fixed latent width W; required for a captured DiT. */
  readonly width?: number;
}

/** A captured graph's fixed dims, after validation. */
export interface CapturedDims {
  readonly batch: number;
  readonly frames: number;
  readonly height: number;
  readonly width: number;
}

function invalidOptions(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

/**
 * Reads a positive integer option, required for the captured form.
 * @throws MODEL_ONNX_OPTIONS_INVALID when it is missing or not a positive integer.
 */
export function requireDim(options: OnnxBuildOptions, field: keyof CapturedDims): number {
  const value = options[field];
  if (value === undefined) {
    throw invalidOptions(`the captured form needs a fixed ${field}`, { field });
  }
  if (!Number.isInteger(value) || value <= 0) {
    throw invalidOptions(`${field} must be a positive integer`, { field, value });
  }
  return value;
}

/**
 * Validates a latent grid against the patch size.
 * @throws MODEL_ONNX_OPTIONS_INVALID when a dim is not a multiple of its patch size.
 */
export function checkPatchMultiple(
  dims: CapturedDims,
  patch: readonly [number, number, number],
): void {
  const grid = [dims.frames, dims.height, dims.width];
  const fields = ['frames', 'height', 'width'] as const;
  fields.forEach((field, i) => {
    const size = grid[i] ?? 0;
    const p = patch[i] ?? 1;
    if (size % p !== 0) {
      throw invalidOptions(`${field} (${size}) must be a multiple of the patch size ${p}`, {
        field,
        value: size,
        patch: p,
      });
    }
  });
}
