import { ONNX_DTYPE, type OnnxDim, type OnnxElemType } from './onnx-types.js';
import {
  intField,
  messages,
  readProtoFields,
  stringField,
  stringsField,
  varints,
} from './proto-reader.js';

/** A graph input, output or initializer as read back from ModelProto bytes. */
export interface OnnxValueSummary {
  readonly name: string;
  /** The element type, or `dtype<N>` for one the builder does not write. */
  readonly elemType: OnnxElemType | `dtype${number}`;
  readonly dims: readonly OnnxDim[];
}

/** An initializer as read back: its value info plus the size of its raw data. */
export interface OnnxInitializerSummary extends OnnxValueSummary {
  readonly rawDataBytes: number;
}

/** The structure of a model, enough to check a graph without running it. */
export interface OnnxModelSummary {
  readonly irVersion: number;
  readonly producerName: string;
  readonly opsetImports: readonly { readonly domain: string; readonly version: number }[];
  readonly graphName: string;
  readonly inputs: readonly OnnxValueSummary[];
  readonly outputs: readonly OnnxValueSummary[];
  readonly initializers: readonly OnnxInitializerSummary[];
  readonly nodes: readonly {
    readonly opType: string;
    readonly inputs: readonly string[];
    readonly outputs: readonly string[];
  }[];
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * Reads back the structure of ModelProto bytes (not the tensor values): opsets, interface,
 * initializer names and shapes, node list. Used by tests and by callers of a card's ONNX export to inspect a graph.
 *
 * @throws FlowfleetError FMT_ONNX_MALFORMED when the bytes are not a well-formed message.
 */
export function decodeOnnxModelSummary(bytes: Uint8Array): OnnxModelSummary {
  const model = readProtoFields(bytes);
  const graphBytes = messages(model, 7)[0] ?? new Uint8Array(0);
  const graph = readProtoFields(graphBytes);
  const metadata: Record<string, string> = {};
  for (const entry of messages(model, 14)) {
    const f = readProtoFields(entry);
    metadata[stringField(f, 1)] = stringField(f, 2);
  }
  return {
    irVersion: intField(model, 1),
    producerName: stringField(model, 2),
    opsetImports: messages(model, 8).map((m) => {
      const f = readProtoFields(m);
      return { domain: stringField(f, 1), version: intField(f, 2) };
    }),
    graphName: stringField(graph, 2),
    inputs: messages(graph, 11).map(decodeValueInfo),
    outputs: messages(graph, 12).map(decodeValueInfo),
    initializers: messages(graph, 5).map(decodeTensorSummary),
    nodes: messages(graph, 1).map((m) => {
      const f = readProtoFields(m);
      return { opType: stringField(f, 4), inputs: stringsField(f, 1), outputs: stringsField(f, 2) };
    }),
    metadata,
  };
}

function elemTypeName(code: number): OnnxValueSummary['elemType'] {
  for (const [name, value] of Object.entries(ONNX_DTYPE)) {
    if (value === code) return name as OnnxElemType;
  }
  return `dtype${code}`;
}

function decodeValueInfo(bytes: Uint8Array): OnnxValueSummary {
  const info = readProtoFields(bytes);
  const type = readProtoFields(messages(info, 2)[0] ?? new Uint8Array(0));
  const tensorType = readProtoFields(messages(type, 1)[0] ?? new Uint8Array(0));
  const shape = readProtoFields(messages(tensorType, 2)[0] ?? new Uint8Array(0));
  const dims = messages(shape, 1).map((d): OnnxDim => {
    const f = readProtoFields(d);
    return varints(f, 1).length > 0 ? intField(f, 1) : stringField(f, 2);
  });
  return { name: stringField(info, 1), elemType: elemTypeName(intField(tensorType, 1)), dims };
}

function decodeTensorSummary(bytes: Uint8Array): OnnxInitializerSummary {
  const f = readProtoFields(bytes);
  const raw = messages(f, 9)[0];
  return {
    name: stringField(f, 8),
    elemType: elemTypeName(intField(f, 2)),
    dims: varints(f, 1).map((d) => Number(BigInt.asIntN(64, d))),
    rawDataBytes: raw?.length ?? 0,
  };
}
