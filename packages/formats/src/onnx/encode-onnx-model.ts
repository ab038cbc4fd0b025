import {
  ONNX_DTYPE,
  type OnnxAttribute,
  type OnnxGraph,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from './onnx-types.js';
import { ProtoWriter } from './proto-writer.js';

// Field numbers from onnx.proto (proto2). Repeated scalars are written unpacked, the proto2 default.
const MODEL = { irVersion: 1, producerName: 2, producerVersion: 3, graph: 7, opset: 8, meta: 14 };
const OPSET = { domain: 1, version: 2 };
const GRAPH = { node: 1, name: 2, initializer: 5, input: 11, output: 12 };
const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 };
const ATTR = { name: 1, f: 2, i: 3, s: 4, t: 5, floats: 7, ints: 8, type: 20 };
const ATTR_TYPE = { float: 1, int: 2, string: 3, tensor: 4, floats: 6, ints: 7 } as const;
const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9 };
const VALUE_INFO = { name: 1, type: 2 };
const TYPE = { tensorType: 1 };
const TENSOR_TYPE = { elemType: 1, shape: 2 };
const SHAPE = { dim: 1 };
const DIM = { value: 1, param: 2 };
const STRING_ENTRY = { key: 1, value: 2 };

const IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Serialises an ONNX model to ModelProto bytes (the one ONNX writer: model cards' graph builders
 * and backends' probe and test models use it). Fields are written in field-number order within
 * each message, optional ones only when present, so equal models give equal bytes.
 */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  const w = new ProtoWriter();
  w.varint(MODEL.irVersion, model.irVersion);
  if (model.producerName !== undefined) w.string(MODEL.producerName, model.producerName);
  if (model.producerVersion !== undefined) w.string(MODEL.producerVersion, model.producerVersion);
  w.message(MODEL.graph, encodeGraph(model.graph));
  for (const opset of model.opsetImports) {
    const o = new ProtoWriter();
    if (opset.domain !== undefined) o.string(OPSET.domain, opset.domain);
    o.varint(OPSET.version, opset.version);
    w.message(MODEL.opset, o);
  }
  for (const [key, value] of Object.entries(model.metadata ?? {})) {
    w.message(
      MODEL.meta,
      new ProtoWriter().string(STRING_ENTRY.key, key).string(STRING_ENTRY.value, value),
    );
  }
  return w.finish();
}

function encodeGraph(graph: OnnxGraph): ProtoWriter {
  const w = new ProtoWriter();
  for (const node of graph.nodes) w.message(GRAPH.node, encodeNode(node));
  w.string(GRAPH.name, graph.name);
  for (const t of graph.initializers ?? []) w.message(GRAPH.initializer, encodeTensor(t));
  for (const v of graph.inputs) w.message(GRAPH.input, encodeValueInfo(v));
  for (const v of graph.outputs) w.message(GRAPH.output, encodeValueInfo(v));
  return w;
}

function encodeNode(node: OnnxNode): ProtoWriter {
  const w = new ProtoWriter();
  for (const input of node.inputs) w.string(NODE.input, input);
  for (const output of node.outputs) w.string(NODE.output, output);
  if (node.name !== undefined) w.string(NODE.name, node.name);
  w.string(NODE.opType, node.opType);
  for (const [name, attr] of Object.entries(node.attributes ?? {})) {
    w.message(NODE.attribute, encodeAttribute(name, attr));
  }
  if (node.domain !== undefined) w.string(NODE.domain, node.domain);
  return w;
}

function encodeAttribute(name: string, attr: OnnxAttribute): ProtoWriter {
  const w = new ProtoWriter();
  w.string(ATTR.name, name);
  switch (attr.kind) {
    case 'int':
      w.varint(ATTR.i, attr.value);
      break;
    case 'ints':
      for (const v of attr.value) w.varint(ATTR.ints, v);
      break;
    case 'float':
      w.float(ATTR.f, attr.value);
      break;
    case 'floats':
      for (const v of attr.value) w.float(ATTR.floats, v);
      break;
    case 'string':
      w.string(ATTR.s, attr.value);
      break;
    case 'tensor':
      w.message(ATTR.t, encodeTensor(attr.value));
      break;
  }
  w.varint(ATTR.type, ATTR_TYPE[attr.kind]);
  return w;
}

function encodeTensor(tensor: OnnxTensor): ProtoWriter {
  const w = new ProtoWriter();
  for (const d of tensor.dims) w.varint(TENSOR.dims, d);
  w.varint(TENSOR.dataType, ONNX_DTYPE[tensor.elemType]);
  w.string(TENSOR.name, tensor.name);
  w.bytes(TENSOR.rawData, littleEndianBytes(tensor.data));
  return w;
}

function encodeValueInfo(info: OnnxValueInfo): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of info.dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.varint(DIM.value, d);
    else dim.string(DIM.param, d);
    shape.message(SHAPE.dim, dim);
  }
  const tensorType = new ProtoWriter()
    .varint(TENSOR_TYPE.elemType, ONNX_DTYPE[info.elemType])
    .message(TENSOR_TYPE.shape, shape);
  const type = new ProtoWriter().message(TYPE.tensorType, tensorType);
  return new ProtoWriter().string(VALUE_INFO.name, info.name).message(VALUE_INFO.type, type);
}

/** Raw little-endian bytes of a typed array, as a view when the host is little-endian. */
function littleEndianBytes(data: OnnxTensor['data']): Uint8Array {
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (IS_LITTLE_ENDIAN) return view;
  const out = new Uint8Array(view.length);
  const width = data.BYTES_PER_ELEMENT;
  for (let i = 0; i < view.length; i += width) {
    for (let b = 0; b < width; b++) out[i + b] = view[i + width - 1 - b] ?? 0;
  }
  return out;
}
