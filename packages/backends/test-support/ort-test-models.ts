import type { OnnxArtifacts, OnnxGraphRequest, TensorData } from '@flowfleet/platform';
import {
  encodeOnnxModel,
  type OnnxElemType,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from '@flowfleet/formats';

/**
 * Small ONNX models for tests of the ort backend and of the backend conformance suite. They are
 * built with formats' `encodeOnnxModel` (the one ONNX writer); real models come from the model
 * cards.
 */

/** What the test models vary: graph interface, nodes and constants (opset 13, IR 8, graph `g`). */
interface TestModel {
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly nodes: readonly OnnxNode[];
  readonly initializers?: readonly OnnxTensor[];
}

function encodeTestModel(model: TestModel): Uint8Array {
  return encodeOnnxModel({
    irVersion: 8,
    opsetImports: [{ version: 13 }],
    graph: { name: 'g', ...model },
  });
}

/** `y = a + b` over a 1-D tensor of symbolic length `n`. */
export function addModel(elemType: OnnxElemType = 'float'): Uint8Array {
  return encodeTestModel({
    inputs: [
      { name: 'a', elemType, dims: ['n'] },
      { name: 'b', elemType, dims: ['n'] },
    ],
    outputs: [{ name: 'y', elemType, dims: ['n'] }],
    nodes: [{ opType: 'Add', inputs: ['a', 'b'], outputs: ['y'] }],
  });
}

/** `y = x·w·w·…·w` (`depth` MatMuls of size×size): a forward heavy enough to time. */
export function matmulChainModel(size: number, depth: number): Uint8Array {
  const nodes = Array.from({ length: depth }, (_, i) => ({
    opType: 'MatMul',
    inputs: [i === 0 ? 'x' : `h${i}`, 'w'],
    outputs: [i === depth - 1 ? 'y' : `h${i + 1}`],
  }));
  const square = [size, size];
  return encodeTestModel({
    inputs: [
      { name: 'x', elemType: 'float', dims: square },
      { name: 'w', elemType: 'float', dims: square },
    ],
    outputs: [{ name: 'y', elemType: 'float', dims: square }],
    nodes,
  });
}

/**
 * Dims of the test MLP: x [batch, in] → [batch, hidden] → [batch, out]. Large enough (K = 256)
 * that ONNX Runtime's pre-packed GEMM changes the last bits, so eager-vs-captured tests can fail.
 */
export const MLP_DIMS = { in: 256, hidden: 512, out: 64 } as const;

/** Deterministic pseudo-random values in [-scale, scale) (an LCG; tests need repeatability only). */
export function seededFloats(seed: number, length: number, scale = 1): Float32Array {
  const out = new Float32Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state / 2 ** 32 - 0.5) * 2 * scale;
  }
  return out;
}

/** A weight set for the test MLP (`fc1.weight`, `fc1.bias`, `fc2.weight`, `fc2.bias`). */
export function mlpWeights(seed: number): Map<string, TensorData> {
  const { in: d, hidden: h, out: o } = MLP_DIMS;
  const t = (dims: number[], s: number): TensorData => ({
    dtype: 'float32',
    dims,
    data: seededFloats(
      seed * 31 + s,
      dims.reduce((n, x) => n * x, 1),
      0.2,
    ),
  });
  return new Map([
    ['fc1.weight', t([d, h], 1)],
    ['fc1.bias', t([h], 2)],
    ['fc2.weight', t([h, o], 3)],
    ['fc2.bias', t([o], 4)],
  ]);
}

/**
 * The test MLP `y = relu(x·W1 + b1)·W2 + b2` in either form of `OnnxGraphRequest`: eager (weights
 * are graph inputs, batch symbolic) or captured (weights baked in as initializers, dims fixed).
 */
export function mlpOnnx(options: OnnxGraphRequest): Uint8Array {
  const { in: d, hidden: h, out: o } = MLP_DIMS;
  const weightInfo = [
    { name: 'fc1.weight', dims: [d, h] },
    { name: 'fc1.bias', dims: [h] },
    { name: 'fc2.weight', dims: [h, o] },
    { name: 'fc2.bias', dims: [o] },
  ];
  const batch = options.form === 'captured' ? (options.inputDims['x']?.[0] ?? 1) : 'batch';
  const nodes = [
    { opType: 'MatMul', inputs: ['x', 'fc1.weight'], outputs: ['h0'] },
    { opType: 'Add', inputs: ['h0', 'fc1.bias'], outputs: ['h1'] },
    { opType: 'Relu', inputs: ['h1'], outputs: ['h2'] },
    { opType: 'MatMul', inputs: ['h2', 'fc2.weight'], outputs: ['h3'] },
    { opType: 'Add', inputs: ['h3', 'fc2.bias'], outputs: ['y'] },
  ];
  const io = {
    outputs: [{ name: 'y', elemType: 'float' as const, dims: [batch, o] }],
    nodes,
  };
  if (options.form === 'eager') {
    return encodeTestModel({
      inputs: [
        { name: 'x', elemType: 'float', dims: [batch, d] },
        ...weightInfo.map((w) => ({ ...w, elemType: 'float' as const })),
      ],
      ...io,
    });
  }
  return encodeTestModel({
    inputs: [{ name: 'x', elemType: 'float', dims: [batch, d] }],
    initializers: weightInfo.map(({ name, dims }) => {
      const tensor = options.weights.get(name);
      if (tensor === undefined || tensor.dtype !== 'float32')
        throw new Error(`missing weight ${name}`);
      return { name, elemType: 'float' as const, dims, data: tensor.data };
    }),
    ...io,
  });
}

/** The test MLP's ONNX artifacts, as a card component provides them (no extra eager inputs). */
export const MLP_ONNX_ARTIFACTS: OnnxArtifacts = Object.freeze({
  buildOnnx: mlpOnnx,
  eagerInputs: () => ({}),
});
