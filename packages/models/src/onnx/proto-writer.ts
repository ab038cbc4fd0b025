/** Protobuf wire types used by the ONNX messages we write. */
const WIRE_VARINT = 0;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

const TEXT_ENCODER = new TextEncoder();

/**
 * A minimal protobuf encoder: enough for ONNX's ModelProto and friends.
 *
 * Bytes are kept as a list of chunks and concatenated once in `finish()`, and a nested message is
 * appended by reference, so a 100 MB initializer is copied exactly once.
 */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private scratch: number[] = [];
  private byteLength = 0;

  /** Total encoded length so far, in bytes. */
  get length(): number {
    return this.byteLength + this.scratch.length;
  }

  /** Writes a varint field (int32, int64, enum, bool). Negative numbers use 10-byte two's complement. */
  varint(field: number, value: number | bigint): this {
    this.tag(field, WIRE_VARINT);
    this.rawVarint(value);
    return this;
  }

  /** Writes a float field (fixed32, little-endian IEEE 754 single). */
  float(field: number, value: number): this {
    this.tag(field, WIRE_FIXED32);
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    for (const b of bytes) this.scratch.push(b);
    return this;
  }

  /** Writes a string field as UTF-8. */
  string(field: number, value: string): this {
    return this.bytes(field, TEXT_ENCODER.encode(value));
  }

  /** Writes a bytes field; the array is referenced, not copied, until `finish()`. */
  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.rawVarint(value.length);
    this.pushChunk(value);
    return this;
  }

  /** Writes an embedded message field. */
  message(field: number, sub: ProtoWriter): this {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.rawVarint(sub.length);
    sub.flushScratch();
    for (const chunk of sub.chunks) this.pushChunk(chunk);
    return this;
  }

  /** Concatenates everything written into one buffer. */
  finish(): Uint8Array {
    this.flushScratch();
    const out = new Uint8Array(this.byteLength);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }

  private tag(field: number, wireType: number): void {
    this.rawVarint(field * 8 + wireType);
  }

  private rawVarint(value: number | bigint): void {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
      let v = value;
      while (v >= 0x80) {
        this.scratch.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
      }
      this.scratch.push(v);
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.scratch.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.scratch.push(Number(v));
  }

  private pushChunk(chunk: Uint8Array): void {
    this.flushScratch();
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.byteLength += chunk.length;
  }

  private flushScratch(): void {
    if (this.scratch.length === 0) return;
    this.chunks.push(Uint8Array.from(this.scratch));
    this.byteLength += this.scratch.length;
    this.scratch = [];
  }
}
