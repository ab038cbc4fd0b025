import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';

/**
 * How a graph is specialised. `eager`: every weight is a graph input named like its state_dict
 * entry and batch/grid dims are symbolic (one session serves any shape and any weight version).
 * `captured`: weights (and RoPE tables) baked in as initializers and every dim fixed.
 */
export type OnnxForm = 'eager' | 'captured';

/** Options of `buildDitOnnx` / `buildTextEncoderOnnx` (and of a card's `artifacts.buildOnnx`). */
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

/** Throws when the form is neither `eager` nor `captured` (options may come from a CLI). */
export function checkForm(options: OnnxBuildOptions): void {
  const form: string = options.form;
  if (form !== 'eager' && form !== 'captured') {
    throw invalidOptions(`unknown form "${form}" (expected eager or captured)`, { form });
  }
}

/** Largest baked-weight payload a single ModelProto can carry (protobuf's 2 GiB message limit, with headroom for the graph). */
export const MAX_CAPTURED_WEIGHT_BYTES = 2_000_000_000;

/**
 * Refuses a captured graph whose float32 weights would not fit one protobuf message.
 * @throws MODEL_ONNX_OPTIONS_INVALID naming the size; the eager form has no such limit.
 */
export function checkCapturedSize(shapes: ReadonlyMap<string, readonly number[]>): void {
  let bytes = 0;
  for (const dims of shapes.values()) bytes += 4 * dims.reduce((a, b) => a * b, 1);
  if (bytes > MAX_CAPTURED_WEIGHT_BYTES) {
    throw invalidOptions(
      `captured weights need ${bytes} bytes, over the ${MAX_CAPTURED_WEIGHT_BYTES}-byte limit of one ONNX protobuf; use the eager form`,
      { field: 'form', weightBytes: bytes, limitBytes: MAX_CAPTURED_WEIGHT_BYTES },
    );
  }
}
