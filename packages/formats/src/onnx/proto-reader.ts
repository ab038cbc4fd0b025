import { FlowfleetError } from '@flowfleet/errors';

/** One decoded protobuf field: varints as bigint, fixed32 as its raw 32 bits, the rest as bytes. */
export type ProtoField =
  | { readonly field: number; readonly wireType: 0; readonly value: bigint }
  | { readonly field: number; readonly wireType: 1; readonly value: bigint }
  | { readonly field: number; readonly wireType: 2; readonly value: Uint8Array }
  | { readonly field: number; readonly wireType: 5; readonly value: number };

const TEXT_DECODER = new TextDecoder();

function malformed(message: string, offset: number): FlowfleetError {
  return new FlowfleetError('FMT_ONNX_MALFORMED', `${message} at byte ${offset}`, {
    details: { offset },
  });
}

/**
 * Decodes one protobuf message into its fields, in wire order (no schema needed).
 *
 * @throws FlowfleetError FMT_ONNX_MALFORMED when the bytes are not a well-formed message.
 */
export function readProtoFields(bytes: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw malformed('truncated varint', pos);
      const b = bytes[pos++] ?? 0;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw malformed('varint longer than 10 bytes', pos);
    }
  };
  while (pos < bytes.length) {
    const key = readVarint();
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (wireType === 0) {
      fields.push({ field, wireType, value: readVarint() });
    } else if (wireType === 1) {
      if (pos + 8 > bytes.length) throw malformed('truncated fixed64', pos);
      fields.push({ field, wireType, value: view.getBigUint64(pos, true) });
      pos += 8;
    } else if (wireType === 2) {
      const length = Number(readVarint());
      if (pos + length > bytes.length) throw malformed('truncated length-delimited field', pos);
      fields.push({ field, wireType, value: bytes.subarray(pos, pos + length) });
      pos += length;
    } else if (wireType === 5) {
      if (pos + 4 > bytes.length) throw malformed('truncated fixed32', pos);
      fields.push({ field, wireType, value: view.getUint32(pos, true) });
      pos += 4;
    } else {
      throw malformed(`unsupported wire type ${wireType}`, pos);
    }
  }
  return fields;
}

/** Values of a repeated varint field, accepting both packed and unpacked encodings. */
export function varints(fields: readonly ProtoField[], field: number): bigint[] {
  const out: bigint[] = [];
  for (const f of fields) {
    if (f.field !== field) continue;
    if (f.wireType === 0) out.push(f.value);
    else if (f.wireType === 2) {
      for (const inner of readPackedVarints(f.value)) out.push(inner);
    }
  }
  return out;
}

/** Sub-messages (or bytes) of a repeated length-delimited field. */
export function messages(fields: readonly ProtoField[], field: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const f of fields) if (f.field === field && f.wireType === 2) out.push(f.value);
  return out;
}

/** The last string value of a field, or '' when absent (protobuf semantics). */
export function stringField(fields: readonly ProtoField[], field: number): string {
  const all = messages(fields, field);
  const last = all[all.length - 1];
  return last === undefined ? '' : TEXT_DECODER.decode(last);
}

/** All string values of a repeated field. */
export function stringsField(fields: readonly ProtoField[], field: number): string[] {
  return messages(fields, field).map((b) => TEXT_DECODER.decode(b));
}

/** The last varint value of a field as a number, or 0 when absent. */
export function intField(fields: readonly ProtoField[], field: number): number {
  const all = varints(fields, field);
  const last = all[all.length - 1];
  return last === undefined ? 0 : Number(BigInt.asIntN(64, last));
}

function readPackedVarints(bytes: Uint8Array): bigint[] {
  const out: bigint[] = [];
  let value = 0n;
  let shift = 0n;
  for (const b of bytes) {
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      out.push(value);
      value = 0n;
      shift = 0n;
    } else {
      shift += 7n;
    }
  }
  return out;
}
