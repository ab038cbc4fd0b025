/**
 * A minimal ONNX `ModelProto` writer: just enough protobuf to express small float32/int64 graphs
 * (probe models, test models, the conformance suite's toy components). Real model graphs come
 * from the model card's ONNX builder (`spec.artifacts.buildOnnx`), never from here.
 */

/** ONNX `TensorProto.DataType` values this writer emits. */
export const ONNX_ELEM_TYPE = { float32: 1, int32: 6, int64: 7 } as const;

/** Element type names accepted by the writer. */
export type OnnxElemType = keyof typeof ONNX_ELEM_TYPE;

/** A graph input or output: name, element type and dims (a string dim is symbolic). */
export interface OnnxValueInfo {
  readonly name: string;
  readonly type: OnnxElemType;
  readonly dims: readonly (number | string)[];
}

/** A constant baked into the model (stored as raw little-endian bytes). */
export interface OnnxInitializer {
  readonly name: string;
  readonly type: OnnxElemType;
  readonly dims: readonly number[];
  readonly data: Float32Array | Int32Array | BigInt64Array;
}

/** One node; attributes are limited to ints and floats. */
export interface OnnxNode {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name?: string;
  readonly attributes?: Readonly<Record<string, number | { readonly float: number }>>;
}

/** A whole single-graph model on the default (`ai.onnx`) domain. */
export interface OnnxModelOptions {
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly nodes: readonly OnnxNode[];
  readonly initializers?: readonly OnnxInitializer[];
  readonly opset?: number;
  readonly irVersion?: number;
  readonly graphName?: string;
}

/** Protobuf wire types used here. */
const VARINT = 0;
const FIXED32 = 5;
const LEN = 2;

class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private pending: number[] = [];

  tag(field: number, wireType: number): this {
    return this.varint((field << 3) | wireType);
  }

  varint(value: number | bigint): this {
    // Negative int64 values are encoded as their two's-complement 64-bit form (10 bytes).
    let v = BigInt.asUintN(64, BigInt(value));
    do {
      const byte = Number(v & 0x7fn);
      v >>= 7n;
      this.pending.push(v > 0n ? byte | 0x80 : byte);
    } while (v > 0n);
    return this;
  }

  uint(field: number, value: number | bigint): this {
    return this.tag(field, VARINT).varint(value);
  }

  float(field: number, value: number): this {
    this.tag(field, FIXED32);
    this.pending.push(...new Uint8Array(new Float32Array([value]).buffer));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LEN).varint(value.length);
    this.flush();
    this.chunks.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    this.flush();
    const out = new Uint8Array(this.chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }

  private flush(): void {
    if (this.pending.length > 0) this.chunks.push(Uint8Array.from(this.pending));
    this.pending = [];
  }
}

function writeValueInfo(w: ProtoWriter, info: OnnxValueInfo): void {
  w.string(1, info.name).message(2, (type) =>
    type.message(1, (tensor) =>
      tensor.uint(1, ONNX_ELEM_TYPE[info.type]).message(2, (shape) => {
        for (const dim of info.dims) {
          shape.message(1, (d) => (typeof dim === 'number' ? d.uint(1, dim) : d.string(2, dim)));
        }
      }),
    ),
  );
}

function writeInitializer(w: ProtoWriter, init: OnnxInitializer): void {
  for (const dim of init.dims) w.uint(1, dim);
  w.uint(2, ONNX_ELEM_TYPE[init.type]).string(8, init.name);
  // raw_data is little-endian; typed arrays are host-endian, and every Node target is little-endian.
  w.bytes(9, new Uint8Array(init.data.buffer, init.data.byteOffset, init.data.byteLength));
}

function writeNode(w: ProtoWriter, node: OnnxNode): void {
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  if (node.name !== undefined) w.string(3, node.name);
  w.string(4, node.opType);
  for (const [name, value] of Object.entries(node.attributes ?? {})) {
    // AttributeProto: name=1, f=2, i=3, type=20 (FLOAT=1, INT=2).
    w.message(5, (a) => {
      a.string(1, name);
      if (typeof value === 'number') a.uint(3, value).uint(20, 2);
      else a.float(2, value.float).uint(20, 1);
    });
  }
}

/**
 * Encodes a single-graph ONNX model (`ModelProto`) to bytes that
 * `InferenceSession.create(bytes)` accepts.
 */
export function encodeOnnxModel(options: OnnxModelOptions): Uint8Array {
  const model = new ProtoWriter();
  model.uint(1, options.irVersion ?? 8);
  model.message(7, (graph) => {
    for (const node of options.nodes) graph.message(1, (n) => writeNode(n, node));
    graph.string(2, options.graphName ?? 'g');
    for (const init of options.initializers ?? [])
      graph.message(5, (t) => writeInitializer(t, init));
    for (const input of options.inputs) graph.message(11, (v) => writeValueInfo(v, input));
    for (const output of options.outputs) graph.message(12, (v) => writeValueInfo(v, output));
  });
  model.message(8, (opset) => opset.uint(2, options.opset ?? 13));
  return model.finish();
}
