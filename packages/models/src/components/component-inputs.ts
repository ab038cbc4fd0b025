import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData, TensorDtype, TensorMap } from '@flowfleet/platform';

/**
 * Returns the named input after checking its dtype and rank.
 * @throws MODEL_INPUT_INVALID when it is missing, of another dtype, or of another rank.
 */
export function requireInput(
  inputs: TensorMap,
  name: string,
  dtypes: readonly TensorDtype[],
  rank: number,
): TensorData {
  const tensor = inputs[name];
  if (tensor === undefined) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `missing input ${name}`, {
      details: { input: name, present: Object.keys(inputs) },
    });
  }
  if (!dtypes.includes(tensor.dtype) || tensor.dims.length !== rank) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `input ${name} has the wrong dtype or rank`, {
      details: {
        input: name,
        dtype: tensor.dtype,
        dims: [...tensor.dims],
        expected: { dtypes, rank },
      },
    });
  }
  let count = 1;
  for (const d of tensor.dims) count *= d;
  if (count !== tensor.data.length) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `input ${name} data does not match its dims`, {
      details: { input: name, dims: [...tensor.dims], length: tensor.data.length },
    });
  }
  return tensor;
}

/** @throws MODEL_INPUT_INVALID when `actual` differs from `expected` for the named input. */
export function requireDim(name: string, axis: number, actual: number, expected: number): void {
  if (actual !== expected) {
    throw new FlowfleetError(
      'MODEL_INPUT_INVALID',
      `input ${name} dim ${axis} is ${actual}, expected ${expected}`,
      {
        details: { input: name, axis, actual, expected },
      },
    );
  }
}
