export { buildDitOnnx, ONNX_GRAPH_VERSION, SYMBOLIC_DIMS } from './dit-graph.js';
export { buildTextEncoderOnnx } from './text-encoder-graph.js';
export { MAX_CAPTURED_WEIGHT_BYTES } from './onnx-options.js';
export type { CapturedDims, OnnxBuildOptions, OnnxForm } from './onnx-options.js';
export { createOnnxArtifacts } from './onnx-artifacts.js';
export type {
  OnnxArtifacts,
  OnnxCapturedDims,
  OnnxComponent,
  OnnxInputDims,
} from './onnx-artifacts.js';
export { exportOnnx, exportOnnxFile } from './export-onnx.js';
export { EXPORT_ONNX_USAGE, parseExportOnnxArgs } from './export-onnx-args.js';
export type { ExportOnnxFileOptions, ExportOnnxOptions, ExportOnnxResult } from './export-onnx.js';
export { GraphBuilder, ONNX_IR_VERSION, ONNX_OPSET, floatAttr } from './graph-builder.js';
export type { AttrInput, Value } from './graph-builder.js';
