import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { GraphBuilder, Value } from './graph-builder.js';
import type { ParamLookup } from './layers.js';
import type { OnnxForm } from './onnx-form.js';

function bakedData(
  name: string,
  dims: readonly number[],
  tensor: TensorData | undefined,
): Float32Array {
  const expected = dims.reduce((a, b) => a * b, 1);
  const data = tensor?.data;
  if (!(data instanceof Float32Array) || data.length !== expected) {
    throw new FlowfleetError(
      'MODEL_WEIGHTS_MISMATCH',
      `weight ${name} data does not match its dims`,
      {
        details: {
          missing: [],
          unexpected: [],
          wrongShape: [{ name, expected: dims, length: data?.length }],
        },
      },
    );
  }
  return data;
}

/**
 * Declares every parameter of a component in the graph, in `shapes` order: as graph inputs
 * (eager) or as initializers holding `weights` (captured), and returns the lookup by name.
 * Captured weights must already have passed `checkWeightsAgainstConfig`.
 *
 * @throws MODEL_WEIGHTS_MISMATCH when a captured tensor's data is not float32 of its dims' size.
 */
export function bindParams(
  g: GraphBuilder,
  shapes: ReadonlyMap<string, readonly number[]>,
  form: OnnxForm,
  weights: ReadonlyMap<string, TensorData> | undefined,
): ParamLookup {
  const bound = new Map<string, Value>();
  for (const [name, dims] of shapes) {
    if (form === 'eager') {
      bound.set(name, g.input(name, 'float', dims));
    } else {
      const data = bakedData(name, dims, weights?.get(name));
      bound.set(name, g.initializer({ name, elemType: 'float', dims: [...dims], data }));
    }
  }
  return (name) => {
    const value = bound.get(name);
    // A defect in the graph code, not an input error: every name comes from parameterShapes.
    if (value === undefined) throw new Error(`graph code asked for unknown parameter ${name}`);
    return value;
  };
}
