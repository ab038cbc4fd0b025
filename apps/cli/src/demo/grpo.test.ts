import { describe, expect, it } from 'vitest';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { ADVANTAGE_EPSILON, channelZeroMean, groupAdvantages, perturbWeights } from './grpo.js';

describe('demo reward and advantages', () => {
  it('reward is the mean of channel 0', () => {
    // [C=2, F=1, H=1, W=2]: channel 0 = [1, 3], channel 1 = [100, 100].
    expect(channelZeroMean(Float32Array.from([1, 3, 100, 100]), [2, 1, 1, 2])).toBe(2);
  });

  it('advantages are group-normalised with the population std', () => {
    const advantages = groupAdvantages([1, 2, 3, 4]);
    const std = Math.sqrt(1.25);
    expect(advantages[0]).toBeCloseTo(-1.5 / (std + ADVANTAGE_EPSILON), 12);
    expect(advantages.reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
    expect(groupAdvantages([5, 5, 5])).toEqual([0, 0, 0]);
    expect(groupAdvantages([])).toEqual([]);
  });

  it('the trainer update is deterministic, small and keeps every shape', () => {
    const v1 = initWeights(wan21MiniCard.config, 1, 'dit');
    const a = perturbWeights(v1, 2, 0.1);
    const b = perturbWeights(v1, 2, 0.1);
    expect([...a.keys()]).toEqual([...v1.keys()]);
    const name = [...v1.keys()][0]!;
    const before = v1.get(name)!.data as Float32Array;
    const after = a.get(name)!.data as Float32Array;
    expect(a.get(name)!.dims).toEqual(v1.get(name)!.dims);
    expect(
      Buffer.from(after.buffer).equals(Buffer.from((b.get(name)!.data as Float32Array).buffer)),
    ).toBe(true);
    expect(Buffer.from(after.buffer).equals(Buffer.from(before.buffer))).toBe(false);
    let moved = 0;
    let size = 0;
    for (let i = 0; i < before.length; i++) {
      moved += (after[i]! - before[i]!) ** 2;
      size += before[i]! ** 2;
    }
    expect(Math.sqrt(moved / size)).toBeGreaterThan(0.05);
    expect(Math.sqrt(moved / size)).toBeLessThan(0.2);
  });
});
