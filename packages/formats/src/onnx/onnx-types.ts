/** ONNX TensorProto.DataType values this codec writes (onnx.proto's names). */
export const ONNX_DTYPE = {
  float: 1,
  int32: 6,
  int64: 7,
  double: 11,
} as const;

/** The element types this codec writes. */
export type OnnxElemType = keyof typeof ONNX_DTYPE;

/** A dimension: a fixed size or a symbolic name (`dim_param`). */
export type OnnxDim = number | string;

/** A graph input or output: name, element type and shape. */
export interface OnnxValueInfo {
  readonly name: string;
  readonly elemType: OnnxElemType;
  readonly dims: readonly OnnxDim[];
}

/** A constant tensor (initializer or tensor attribute), stored as little-endian raw data. */
export interface OnnxTensor {
  readonly name: string;
  readonly elemType: OnnxElemType;
  readonly dims: readonly number[];
  readonly data: Float32Array | Float64Array | Int32Array | BigInt64Array;
}

/** A node attribute value; the kind picks the AttributeProto field. */
export type OnnxAttribute =
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'ints'; readonly value: readonly number[] }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'floats'; readonly value: readonly number[] }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'tensor'; readonly value: OnnxTensor };

/** One graph node. Optional fields are written only when present. */
export interface OnnxNode {
  readonly opType: string;
  readonly name?: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes?: Readonly<Record<string, OnnxAttribute>>;
  readonly domain?: string;
}

/** A graph: nodes in topological order plus its interface and constants. */
export interface OnnxGraph {
  readonly name: string;
  readonly nodes: readonly OnnxNode[];
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly initializers?: readonly OnnxTensor[];
}

/** An operator set a model imports; no `domain` means the default `ai.onnx` domain. */
export interface OnnxOpsetImport {
  readonly domain?: string;
  readonly version: number;
}

/** A whole model. Optional fields are written only when present (an empty string is written). */
export interface OnnxModel {
  readonly irVersion: number;
  readonly opsetImports: readonly OnnxOpsetImport[];
  readonly producerName?: string;
  readonly producerVersion?: string;
  readonly graph: OnnxGraph;
  readonly metadata?: Readonly<Record<string, string>>;
}
