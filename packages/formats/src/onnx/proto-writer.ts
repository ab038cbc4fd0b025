/** Protobuf wire types used by the ONNX messages we write. */
const WIRE_VARINT = 0;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

/** Bytes fields and nested parts at least this large are referenced, not copied, until finish. */
const REFERENCE_BYTES = 4096;

const TEXT_ENCODER = new TextEncoder();
const FLOAT_SCRATCH = new Float32Array(1);
const FLOAT_BYTES = new Uint8Array(FLOAT_SCRATCH.buffer);

/**
 * A minimal protobuf encoder: enough for ONNX's ModelProto and friends.
 *
 * Small fields go into one growable buffer; a large bytes field (an initializer's raw data) and a
 * nested message's large parts are kept by reference, so a 100 MB initializer is copied exactly
 * once, into the buffer `finish()` returns (peak memory: the source tensors plus the output).
 */
export class ProtoWriter {
  #parts: Uint8Array[] = [];
  #partsBytes = 0;
  #buf = new Uint8Array(64);
  #pos = 0;

  /** Total encoded length so far, in bytes. */
  get length(): number {
    return this.#partsBytes + this.#pos;
  }

  /** Writes a varint field (int32, int64, enum, bool). Negative numbers use 10-byte two's complement. */
  varint(field: number, value: number | bigint): this {
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(value);
    return this;
  }

  /** Writes a float field (fixed32, little-endian IEEE 754 single). */
  float(field: number, value: number): this {
    this.#tag(field, WIRE_FIXED32);
    FLOAT_SCRATCH[0] = value;
    this.#ensure(4);
    // Typed arrays are host-endian; protobuf fixed32 is little-endian, as is every Node target.
    this.#buf.set(FLOAT_BYTES, this.#pos);
    this.#pos += 4;
    return this;
  }

  /** Writes a string field as UTF-8. */
  string(field: number, value: string): this {
    return this.bytes(field, TEXT_ENCODER.encode(value));
  }

  /** Writes a bytes field; a large array is referenced, not copied, until `finish()`. */
  bytes(field: number, value: Uint8Array): this {
    this.#tag(field, WIRE_LENGTH_DELIMITED);
    this.#rawVarint(value.length);
    this.#append(value);
    return this;
  }

  /** Writes an embedded message field. */
  message(field: number, sub: ProtoWriter): this {
    this.#tag(field, WIRE_LENGTH_DELIMITED);
    this.#rawVarint(sub.length);
    for (const part of sub.#flushedParts()) this.#append(part);
    return this;
  }

  /** Everything written, as one buffer. */
  finish(): Uint8Array {
    const parts = this.#flushedParts();
    if (parts.length === 1) return parts[0]!;
    const out = new Uint8Array(this.#partsBytes);
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  #flushedParts(): readonly Uint8Array[] {
    if (this.#pos > 0) {
      this.#parts.push(this.#buf.subarray(0, this.#pos));
      this.#partsBytes += this.#pos;
      this.#buf = new Uint8Array(64);
      this.#pos = 0;
    }
    return this.#parts;
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (bytes.length >= REFERENCE_BYTES) {
      this.#flushedParts();
      this.#parts.push(bytes);
      this.#partsBytes += bytes.length;
      return;
    }
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  #ensure(extra: number): void {
    if (this.#pos + extra <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + extra) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#pos));
    this.#buf = grown;
  }

  #tag(field: number, wireType: number): void {
    this.#rawVarint(field * 8 + wireType);
  }

  #rawVarint(value: number | bigint): void {
    this.#ensure(10);
    const buf = this.#buf;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
      let v = value;
      while (v >= 0x80) {
        buf[this.#pos++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      buf[this.#pos++] = v;
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      buf[this.#pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    buf[this.#pos++] = Number(v);
  }
}
