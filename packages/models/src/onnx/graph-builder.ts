import {
  ONNX_DTYPE,
  type OnnxAttribute,
  type OnnxDim,
  type OnnxElemType,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from '@flowfleet/formats';

/** IR version written (ONNX 1.12 era, the one that introduced opset 17). */
export const ONNX_IR_VERSION = 8;
/** The ai.onnx opset every flowfleet graph targets. */
export const ONNX_OPSET = 17;

/** A value in the graph under construction: the name of a tensor. */
export type Value = string;

/** Attribute values as plain JS: numbers are ints unless wrapped with `floatAttr`. */
export type AttrInput = OnnxAttribute | number | readonly number[] | string;

/** Marks a number (or list) as a float attribute. */
export function floatAttr(value: number | readonly number[]): OnnxAttribute {
  return typeof value === 'number'
    ? { kind: 'float', value }
    : { kind: 'floats', value: [...value] };
}

function toAttribute(value: AttrInput): OnnxAttribute {
  if (typeof value === 'number') return { kind: 'int', value };
  if (typeof value === 'string') return { kind: 'string', value };
  if (Array.isArray(value)) return { kind: 'ints', value: [...(value as readonly number[])] };
  return value as OnnxAttribute;
}

/**
 * A small DSL that records ONNX nodes in topological order, so network code reads like its spec:
 * `g.add(g.matMul(x, w), b)`. Intermediate values get readable names from the current scope
 * (`blocks.0.self_attn/MatMul_12`); constants are `Constant` nodes, so the initializer list holds
 * exactly what the caller bakes in.
 */
export class GraphBuilder {
  private readonly nodes: OnnxNode[] = [];
  private readonly inputs: OnnxValueInfo[] = [];
  private readonly outputs: OnnxValueInfo[] = [];
  private readonly initializers: OnnxTensor[] = [];
  private readonly names = new Set<string>();
  private readonly declaredDims = new Map<string, readonly OnnxDim[]>();
  private readonly scopes: string[] = [];
  private counter = 0;

  constructor(readonly name: string) {}

  /** Declares a graph input. */
  input(name: string, elemType: OnnxElemType, dims: readonly OnnxDim[]): Value {
    this.claim(name);
    this.inputs.push({ name, elemType, dims: [...dims] });
    this.declaredDims.set(name, [...dims]);
    return name;
  }

  /** Adds a named initializer (a baked constant such as a weight). */
  initializer(tensor: OnnxTensor): Value {
    this.claim(tensor.name);
    this.initializers.push(tensor);
    this.declaredDims.set(tensor.name, [...tensor.dims]);
    return tensor.name;
  }

  /** The fixed dims of a graph input or initializer (a defect to ask for anything else). */
  staticDims(value: Value): number[] {
    const dims = this.declaredDims.get(value);
    if (dims === undefined || !dims.every((d): d is number => typeof d === 'number')) {
      throw new Error(`${value} is not an input or initializer with fixed dims`);
    }
    return [...dims];
  }

  /** Declares `value` as the graph output `name` (through an Identity when the names differ). */
  output(value: Value, name: string, elemType: OnnxElemType, dims: readonly OnnxDim[]): void {
    if (value !== name) {
      this.claim(name);
      this.nodes.push({
        opType: 'Identity',
        name: `${name}/Identity`,
        inputs: [value],
        outputs: [name],
        attributes: {},
      });
    }
    this.outputs.push({ name, elemType, dims: [...dims] });
  }

  /** Runs `body` with `scope` appended to the names of the values it creates. */
  scope<T>(scope: string, body: () => T): T {
    this.scopes.push(scope);
    try {
      return body();
    } finally {
      this.scopes.pop();
    }
  }

  /** Adds a node with `outputCount` outputs and returns their names. */
  nodeN(
    opType: string,
    inputs: readonly Value[],
    attributes: Readonly<Record<string, AttrInput>> = {},
    outputCount = 1,
  ): Value[] {
    const base = `${this.scopes.join('/')}${this.scopes.length > 0 ? '/' : ''}${opType}_${this.counter++}`;
    const outputs = Array.from({ length: outputCount }, (_, i) =>
      outputCount === 1 ? base : `${base}:${i}`,
    );
    for (const o of outputs) this.claim(o);
    const attrs: Record<string, OnnxAttribute> = {};
    for (const [key, value] of Object.entries(attributes)) attrs[key] = toAttribute(value);
    this.nodes.push({ opType, name: base, inputs: [...inputs], outputs, attributes: attrs });
    return outputs;
  }

  /** Adds a single-output node. */
  node(
    opType: string,
    inputs: readonly Value[],
    attributes: Readonly<Record<string, AttrInput>> = {},
  ): Value {
    return this.nodeN(opType, inputs, attributes, 1)[0] as Value;
  }

  // ---- constants -------------------------------------------------------------------------

  /** A float32 constant (a scalar when `dims` is omitted and one value is given). */
  constFloat(values: number | readonly number[], dims?: readonly number[]): Value {
    const data = Float32Array.from(typeof values === 'number' ? [values] : values);
    return this.constant('float', data, dims ?? (typeof values === 'number' ? [] : [data.length]));
  }

  /** A float64 constant. */
  constDouble(values: number | readonly number[], dims?: readonly number[]): Value {
    const data = Float64Array.from(typeof values === 'number' ? [values] : values);
    return this.constant('double', data, dims ?? (typeof values === 'number' ? [] : [data.length]));
  }

  /** A 1-D int64 constant (shapes, axes, indices). */
  constInt64(values: readonly number[]): Value {
    return this.constant('int64', BigInt64Array.from(values.map((v) => BigInt(v))), [
      values.length,
    ]);
  }

  private constant(
    elemType: OnnxElemType,
    data: OnnxTensor['data'],
    dims: readonly number[],
  ): Value {
    const name = `const_${this.counter}`;
    return this.node('Constant', [], {
      value: { kind: 'tensor', value: { name, elemType, dims: [...dims], data } },
    });
  }

  // ---- elementwise -----------------------------------------------------------------------

  add(a: Value, b: Value): Value {
    return this.node('Add', [a, b]);
  }
  sub(a: Value, b: Value): Value {
    return this.node('Sub', [a, b]);
  }
  mul(a: Value, b: Value): Value {
    return this.node('Mul', [a, b]);
  }
  div(a: Value, b: Value): Value {
    return this.node('Div', [a, b]);
  }
  /** Floating-point remainder with the sign of the dividend (C fmod). */
  fmod(a: Value, b: Value): Value {
    return this.node('Mod', [a, b], { fmod: 1 });
  }
  sqrt(x: Value): Value {
    return this.node('Sqrt', [x]);
  }
  tanh(x: Value): Value {
    return this.node('Tanh', [x]);
  }
  sigmoid(x: Value): Value {
    return this.node('Sigmoid', [x]);
  }
  cos(x: Value): Value {
    return this.node('Cos', [x]);
  }
  sin(x: Value): Value {
    return this.node('Sin', [x]);
  }
  cast(x: Value, to: OnnxElemType): Value {
    return this.node('Cast', [x], { to: ONNX_DTYPE[to] });
  }

  // ---- linear algebra, reductions --------------------------------------------------------

  matMul(a: Value, b: Value): Value {
    return this.node('MatMul', [a, b]);
  }
  softmax(x: Value, axis = -1): Value {
    return this.node('Softmax', [x], { axis });
  }
  /** ReduceMean over `axes` (opset 17: axes is an attribute). */
  reduceMean(x: Value, axes: readonly number[], keepdims = true): Value {
    return this.node('ReduceMean', [x], { axes, keepdims: keepdims ? 1 : 0 });
  }
  /** 3-D convolution with bias, stride = kernel (a patch embedding). */
  conv(x: Value, weight: Value, bias: Value, kernel: readonly number[]): Value {
    return this.node('Conv', [x, weight, bias], { kernel_shape: kernel, strides: kernel });
  }

  // ---- shape -----------------------------------------------------------------------------

  /** Reshape to a fixed target (0 copies the input dim, -1 infers) or to a shape tensor. */
  reshape(x: Value, shape: readonly number[] | Value): Value {
    const target = typeof shape === 'string' ? shape : this.constInt64(shape);
    return this.node('Reshape', [x, target]);
  }
  transpose(x: Value, perm: readonly number[]): Value {
    return this.node('Transpose', [x], { perm });
  }
  unsqueeze(x: Value, axes: readonly number[]): Value {
    return this.node('Unsqueeze', [x, this.constInt64(axes)]);
  }
  concat(values: readonly Value[], axis: number): Value {
    return this.node('Concat', values, { axis });
  }
  /** Splits `x` into `parts` equal pieces along `axis`. */
  split(x: Value, axis: number, parts: number): Value[] {
    return this.nodeN('Split', [x], { axis }, parts);
  }
  /** Gather along `axis` (embedding lookup, picking shape entries). */
  gather(data: Value, indices: Value, axis = 0): Value {
    return this.node('Gather', [data, indices], { axis });
  }
  shape(x: Value): Value {
    return this.node('Shape', [x]);
  }

  // ---- output ----------------------------------------------------------------------------

  /** The model: IR 8, ai.onnx opset 17, with optional metadata_props. */
  toModel(producerVersion: string, metadata: Readonly<Record<string, string>> = {}): OnnxModel {
    return {
      irVersion: ONNX_IR_VERSION,
      opsetImports: [{ domain: '', version: ONNX_OPSET }],
      producerName: 'flowfleet',
      producerVersion,
      graph: {
        name: this.name,
        nodes: this.nodes,
        inputs: this.inputs,
        outputs: this.outputs,
        initializers: this.initializers,
      },
      metadata,
    };
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new Error(`graph value ${name} defined twice`);
    this.names.add(name);
  }
}
