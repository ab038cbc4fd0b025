import { describe, expect, it } from 'vitest';
import { cfgCombine } from './cfg-combine.js';

describe('cfgCombine', () => {
  const uncond = Float32Array.from([0.25, -1, 3]);
  const cond = Float32Array.from([0.5, 1, 3.1]);

  it('computes v_u + w·(v_c − v_u) in float64 and rounds once to float32', () => {
    const expected = [...uncond].map((u, i) => Math.fround(u + 4.5 * (cond[i]! - u)));
    expect([...cfgCombine(uncond, cond, 4.5)]).toEqual(expected);
  });

  it('gives the unconditional velocity at w = 0 and the conditional one at w = 1', () => {
    expect(cfgCombine(uncond, cond, 0)).toEqual(uncond);
    expect(cfgCombine(uncond, cond, 1)).toEqual(cond);
  });

  it('writes into `out`, which may alias an input', () => {
    const expected = cfgCombine(uncond, cond, 5);
    const alias = Float32Array.from(cond);
    expect(cfgCombine(uncond, alias, 5, alias)).toBe(alias);
    expect(alias).toEqual(expected);
  });

  it('rejects length mismatches and a non-finite scale', () => {
    const calls = [
      () => cfgCombine(uncond, new Float32Array(2), 4.5),
      () => cfgCombine(uncond, cond, 4.5, new Float32Array(1)),
      () => cfgCombine(uncond, cond, Number.POSITIVE_INFINITY),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }));
    }
  });
});
