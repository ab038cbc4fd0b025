/**
 * The provider probe model, hand-encoded: `y = Identity(x)` with `x`, `y` float32 of shape [1]
 * (63 bytes). Creating a session on it with `executionProviders: [name]` is the cheapest honest
 * test that ONNX Runtime can initialise that provider here.
 *
 * ONNX models are protobuf `ModelProto` messages. Each field is a key byte `(field << 3) | wire`
 * (wire 0 = varint, 2 = length-delimited) followed by a varint value, or by a length and that
 * many bytes. Strings and sub-messages are length-delimited. The fields used (onnx.proto):
 *   ModelProto:        ir_version=1, graph=7, opset_import=8
 *   OperatorSetIdProto: version=2 (domain omitted = the default `ai.onnx` domain)
 *   GraphProto:        node=1, name=2, input=11, output=12
 *   NodeProto:         input=1, output=2, op_type=4
 *   ValueInfoProto:    name=1, type=2;  TypeProto: tensor_type=1
 *   TypeProto.Tensor:  elem_type=1 (1 = FLOAT), shape=2
 *   TensorShapeProto:  dim=1;  Dimension: dim_value=1
 * `encodeOnnxModel` (@flowfleet/formats) produces exactly these bytes; a unit test keeps them equal.
 */
// prettier-ignore
export const PROBE_MODEL_BYTES: Uint8Array = Uint8Array.from([
  0x08, 0x08,                                      // ir_version = 8
  0x3a, 0x37,                                      // graph (55 bytes):
  0x0a, 0x10,                                      //   node (16 bytes):
  0x0a, 0x01, 0x78,                                //     input "x"
  0x12, 0x01, 0x79,                                //     output "y"
  0x22, 0x08, 0x49, 0x64, 0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, //     op_type "Identity"
  0x12, 0x01, 0x67,                                //   name "g"
  0x5a, 0x0f,                                      //   input (15 bytes): ValueInfoProto
  0x0a, 0x01, 0x78,                                //     name "x"
  0x12, 0x0a,                                      //     type (10 bytes):
  0x0a, 0x08,                                      //       tensor_type (8 bytes):
  0x08, 0x01,                                      //         elem_type = 1 (FLOAT)
  0x12, 0x04, 0x0a, 0x02, 0x08, 0x01,              //         shape { dim { dim_value: 1 } }
  0x62, 0x0f,                                      //   output (15 bytes): ValueInfoProto
  0x0a, 0x01, 0x79,                                //     name "y"
  0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01,              //     type: tensor_type, elem_type FLOAT,
  0x12, 0x04, 0x0a, 0x02, 0x08, 0x01,              //       shape [1]
  0x42, 0x02,                                      // opset_import (2 bytes):
  0x10, 0x0d,                                      //   version = 13
]);

/** The probe model's input and output names. */
export const PROBE_MODEL_IO = { input: 'x', output: 'y' } as const;
