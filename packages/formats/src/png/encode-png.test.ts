import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodePngRgb } from './encode-png.js';

/** CRC-32 (ISO 3309, as PNG § D uses it), bit by bit: independent of node's zlib. */
function referenceCrc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

interface Chunk {
  readonly type: string;
  readonly data: Uint8Array;
}

/** Splits a PNG into its chunks, checking the signature and each chunk's CRC. */
function chunksOf(png: Uint8Array): Chunk[] {
  expect(Array.from(png.subarray(0, 8))).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: Chunk[] = [];
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    const typeAndData = png.subarray(at + 4, at + 8 + length);
    expect(view.getUint32(at + 8 + length)).toBe(referenceCrc32(typeAndData));
    chunks.push({
      type: Buffer.from(typeAndData.subarray(0, 4)).toString('latin1'),
      data: typeAndData.subarray(4),
    });
    at += 12 + length;
  }
  return chunks;
}

/** Decodes an 8-bit RGB, non-interlaced PNG whose rows all use filter 0 (what the encoder writes). */
function decode(png: Uint8Array): { width: number; height: number; rgb: Uint8Array } {
  const chunks = chunksOf(png);
  expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
  const ihdr = new DataView(chunks[0]!.data.buffer, chunks[0]!.data.byteOffset, 13);
  const width = ihdr.getUint32(0);
  const height = ihdr.getUint32(4);
  expect(Array.from(chunks[0]!.data.subarray(8))).toEqual([8, 2, 0, 0, 0]);
  const raw = inflateSync(chunks[1]!.data);
  expect(raw.length).toBe((width * 3 + 1) * height);
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const row = raw.subarray(y * (width * 3 + 1), (y + 1) * (width * 3 + 1));
    expect(row[0]).toBe(0);
    rgb.set(row.subarray(1), y * width * 3);
  }
  return { width, height, rgb };
}

describe('encodePngRgb', () => {
  it.each([
    [1, 1],
    [3, 2],
    [17, 5],
    [64, 48],
  ])('round-trips a %i×%i image byte for byte, with valid chunk CRCs', (width, height) => {
    const rgb = Uint8Array.from(
      { length: width * height * 3 },
      (_, i) => (i * 73 + (i >> 5)) % 256,
    );
    rgb[0] = 0;
    rgb[rgb.length - 1] = 255;
    const decoded = decode(encodePngRgb(rgb, width, height));
    expect(decoded).toEqual({ width, height, rgb });
  });

  it('refuses a byte count that is not width · height · 3, and dimensions below 1', () => {
    expect(() => encodePngRgb(new Uint8Array(5), 1, 2)).toThrow(
      expect.objectContaining({ code: 'FMT_INVALID_ARGUMENT' }),
    );
    for (const [w, h] of [
      [0, 1],
      [1, 0],
      [1.5, 2],
    ] as const) {
      expect(() => encodePngRgb(new Uint8Array(0), w, h)).toThrow(
        expect.objectContaining({ code: 'FMT_INVALID_ARGUMENT' }),
      );
    }
  });
});
