import { FlowfleetError } from '@flowfleet/errors';
import type { OnnxGraphRequest } from '@flowfleet/platform';

/**
 * How a graph is specialised. `eager`: every weight is a graph input named like its state_dict
 * entry and the dims that vary are symbolic (one session serves any shape and any weight
 * version). `captured`: weights (and tables derived from the dims) baked in as initializers and
 * every dim fixed.
 */
export type OnnxForm = OnnxGraphRequest['form'];

function invalidOptions(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

/**
 * Throws when `form` is neither `eager` nor `captured` (it may come from a CLI).
 * @throws MODEL_ONNX_OPTIONS_INVALID
 */
export function checkForm(form: string): asserts form is OnnxForm {
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
