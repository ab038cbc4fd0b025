import { describe, expect, it } from 'vitest';
import { DivergenceReporter, firstDivergence, type TapRecord } from './divergence-reporter.js';

function run(perturb?: { step: number; tap: string; index: number; by: number }): TapRecord[] {
  const records: TapRecord[] = [];
  for (let step = 0; step < 4; step++) {
    for (const tap of ['velocity', 'latents']) {
      const data = Float32Array.from({ length: 8 }, (_, i) => step + i / 8);
      if (perturb && perturb.step === step && perturb.tap === tap) {
        data[perturb.index] = (data[perturb.index] ?? 0) + perturb.by;
      }
      records.push({ step, tap, data });
    }
  }
  return records;
}

describe('first-divergence reporter', () => {
  it('finds no divergence between identical runs', () => {
    expect(firstDivergence(run(), run())).toBeUndefined();
  });

  it('reports the first (step, tap, index) where runs part bitwise', () => {
    const divergence = firstDivergence(run(), run({ step: 2, tap: 'latents', index: 5, by: 1e-6 }));
    expect(divergence).toMatchObject({ step: 2, tap: 'latents', index: 5, a: 2 + 5 / 8 });
    expect(divergence?.b).not.toBe(divergence?.a);
  });

  it('ignores differences inside the tolerance and reports the first beyond it', () => {
    const a = run();
    const b = run({ step: 1, tap: 'velocity', index: 3, by: 1e-6 });
    b[7] = { ...b[7]!, data: b[7]!.data.map((x, i) => (i === 6 ? x + 0.5 : x)) }; // step 3, latents
    expect(firstDivergence(a, b, { atol: 1e-5 })).toMatchObject({
      step: 3,
      tap: 'latents',
      index: 6,
    });
    expect(firstDivergence(a, b)).toMatchObject({ step: 1, tap: 'velocity', index: 3 });
  });

  it('keeps the earliest step even when fed out of order', () => {
    const reporter = new DivergenceReporter({ atol: 0 });
    reporter.feed(5, 'x', new Float32Array([1]), new Float32Array([2]));
    reporter.feed(2, 'x', new Float32Array([0, 1]), new Float32Array([0, 3]));
    reporter.feed(7, 'x', new Float32Array([1]), new Float32Array([1]));
    expect(reporter.first).toMatchObject({ step: 2, tap: 'x', index: 1, a: 1, b: 3, absDiff: 2 });
    expect(reporter.compared).toBe(3);
  });

  it('throws PLAT_PARITY_SHAPE for differing lengths or tap sets', () => {
    const shape = expect.objectContaining({ code: 'PLAT_PARITY_SHAPE' });
    expect(() =>
      new DivergenceReporter().feed(0, 'x', new Float32Array(1), new Float32Array(2)),
    ).toThrow(shape);
    expect(() => firstDivergence(run(), run().slice(1))).toThrow(shape);
    const renamed = run().map((r) =>
      r.tap === 'latents' && r.step === 3 ? { ...r, tap: 'noise' } : r,
    );
    expect(() => firstDivergence(run(), renamed)).toThrow(shape);
  });
});
