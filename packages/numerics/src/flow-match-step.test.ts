import { describe, expect, it } from 'vitest';
import { flowMatchStep } from './flow-match-step.js';

describe('flowMatchStep', () => {
  const x = Float32Array.from([1, -2, 0.1]);
  const v = Float32Array.from([0.5, 4, -0.3]);

  it('computes x + (σ′ − σ)·v in float64 and rounds once to float32', () => {
    const out = flowMatchStep(x, v, 0.8, 0.6);
    const dt = 0.6 - 0.8;
    expect([...out]).toEqual([...x].map((xi, i) => Math.fround(xi + dt * v[i]!)));
  });

  it('writes into `out`, including in place over x', () => {
    const expected = flowMatchStep(x, v, 0.8, 0.6);
    const out = new Float32Array(3);
    expect(flowMatchStep(x, v, 0.8, 0.6, out)).toBe(out);
    expect(out).toEqual(expected);
    const inPlace = Float32Array.from(x);
    flowMatchStep(inPlace, v, 0.8, 0.6, inPlace);
    expect(inPlace).toEqual(expected);
  });

  it('rejects length mismatches and σ outside [0, 1]', () => {
    const calls = [
      () => flowMatchStep(x, new Float32Array(2), 0.8, 0.6),
      () => flowMatchStep(x, v, 0.8, 0.6, new Float32Array(4)),
      () => flowMatchStep(x, v, 1.5, 0.6),
      () => flowMatchStep(x, v, 0.8, -0.1),
      () => flowMatchStep(x, v, Number.NaN, 0.6),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }));
    }
  });
});
