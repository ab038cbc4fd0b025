import { describe, expect, it } from 'vitest';
import { pixelByte, writeRgbFrames } from './rollout-outputs.js';

describe('frames as RGB bytes', () => {
  it('maps [−1, 1] to 0..255, clamps outside, rounds ties to even (numpy)', () => {
    expect([-1, 1, -2, 2, 0].map(pixelByte)).toEqual([0, 255, 0, 255, 128]);
    // 0 is the one float whose (v + 1) / 2 · 255 is a tie (127.5) in float64: 128, as numpy.
    expect(pixelByte(0.25)).toBe(159); // 159.375
    expect(pixelByte(-0.999)).toBe(0); // 0.1275
  });

  it('moves channels last and keeps only the selected frames', () => {
    // A clip [3, 2, 1, 2]: channel c, frame f, pixel p = c·0.5 − 1 + f·0.25 + p·0.1.
    const clip = Float32Array.from({ length: 12 }, (_, i) => {
      const c = Math.floor(i / 4);
      const f = Math.floor(i / 2) % 2;
      const p = i % 2;
      return c * 0.5 - 1 + f * 0.25 + p * 0.1;
    });
    const out = new Uint8Array(6);
    writeRgbFrames(clip, 2, 2, [1], out, 0);
    const byte = (c: number, p: number) => pixelByte(Math.fround(c * 0.5 - 1 + 0.25 + p * 0.1));
    expect(Array.from(out)).toEqual([
      byte(0, 0),
      byte(1, 0),
      byte(2, 0),
      byte(0, 1),
      byte(1, 1),
      byte(2, 1),
    ]);
  });
});
