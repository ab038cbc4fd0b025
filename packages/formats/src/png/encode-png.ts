import { crc32, deflateSync } from 'node:zlib';
import { FlowfleetError } from '@flowfleet/errors';

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
/** IHDR colour type 2: truecolour (RGB), no alpha. */
const COLOUR_TYPE_RGB = 2;
/** PNG's largest width or height (2^31 − 1). */
const MAX_DIMENSION = 0x7fffffff;

/** One chunk: length, type, data, and the CRC-32 of type + data (PNG § 5.3). */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(Buffer.from(type, 'latin1'), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function checkDimension(name: 'width' | 'height', value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > MAX_DIMENSION) {
    throw new FlowfleetError('FMT_INVALID_ARGUMENT', `${name} ${value} is not an integer ≥ 1`, {
      details: { argument: name, value, size: MAX_DIMENSION + 1 },
    });
  }
}

/**
 * Encodes row-major RGB bytes ([height, width, 3], what a RolloutFile v2 frame holds) as a PNG:
 * 8-bit truecolour, no alpha, no colour-space chunk (the bytes are shown as sRGB), each row
 * with filter type 0 and the image data deflated by node's zlib. Lossless: a PNG decoder gives
 * back exactly `rgb`.
 * @throws FMT_INVALID_ARGUMENT when a dimension is not a positive integer or `rgb` is not
 *   width · height · 3 bytes
 */
export function encodePngRgb(rgb: Uint8Array, width: number, height: number): Uint8Array {
  checkDimension('width', width);
  checkDimension('height', height);
  const rowBytes = width * 3;
  if (rgb.length !== rowBytes * height) {
    throw new FlowfleetError(
      'FMT_INVALID_ARGUMENT',
      `${rgb.length} bytes are not a ${width}×${height} RGB image (${rowBytes * height} bytes)`,
      { details: { argument: 'rgb', value: rgb.length, size: rowBytes * height } },
    );
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, COLOUR_TYPE_RGB, 0, 0, 0], 8); // bit depth, colour type, deflate, filter, no interlace
  // Each scanline is its filter-type byte (0: none) and the row's bytes.
  const scanlines = new Uint8Array((rowBytes + 1) * height);
  for (let y = 0; y < height; y++) {
    scanlines.set(rgb.subarray(y * rowBytes, (y + 1) * rowBytes), y * (rowBytes + 1) + 1);
  }
  const parts = [
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(scanlines)),
    chunk('IEND', new Uint8Array(0)),
  ];
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
