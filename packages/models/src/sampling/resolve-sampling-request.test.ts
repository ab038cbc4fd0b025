import { isFlowfleetError } from '@flowfleet/errors';
import { linearShiftSigmas } from '@flowfleet/numerics';
import { describe, expect, it } from 'vitest';
import { wan21MiniCard } from '../wan21/wan21-mini-card.js';
import { resolveSamplingRequest } from './resolve-sampling-request.js';
import type { SamplingRequest } from './sampling-request.js';

const base: SamplingRequest = { prompt: 'x', seeds: [1, 2] };

function fieldOf(request: SamplingRequest): string | undefined {
  try {
    wan21MiniCard.resolveRequest(request);
  } catch (error) {
    if (isFlowfleetError(error, 'MODEL_INVALID_REQUEST')) return String(error.details['field']);
    throw error;
  }
  return undefined;
}

describe('resolveSamplingRequest', () => {
  it('fills defaults from the card', () => {
    const resolved = resolveSamplingRequest(wan21MiniCard, base);
    const { sampling, latent } = wan21MiniCard;
    expect(resolved).toMatchObject({
      negativePrompt: '',
      steps: sampling.steps,
      shift: sampling.shift,
      sampler: sampling.sampler,
      guidanceScale: sampling.guidanceScale,
      noiseLevel: sampling.noiseLevel,
      shape: latent,
    });
    expect(resolved.sigmas).toEqual(linearShiftSigmas(sampling.steps, sampling.shift));
  });

  it('runs the unconditional branch by the named CFG rule, and requires cfg_combine only then', () => {
    const runs = (guidanceScale: number, cfgRule?: 'unless-one' | 'above-one') => {
      const resolved = wan21MiniCard.resolveRequest({
        ...base,
        guidanceScale,
        ...(cfgRule === undefined ? {} : { cfgRule }),
      });
      const ops = wan21MiniCard.requiredOps(resolved);
      expect(ops.includes('cfg_combine')).toBe(resolved.cfg);
      return [resolved.cfgRule, resolved.cfg];
    };
    // Default: every w ≠ 1 (flowfleet's rule so far).
    expect(runs(0.5)).toEqual(['unless-one', true]);
    expect(runs(1)).toEqual(['unless-one', false]);
    // diffusers' and flow_grpo's: only w > 1.
    expect(runs(0.5, 'above-one')).toEqual(['above-one', false]);
    expect(runs(1, 'above-one')).toEqual(['above-one', false]);
    expect(runs(4.5, 'above-one')).toEqual(['above-one', true]);
    expect(fieldOf({ ...base, cfgRule: 'always' as 'unless-one' })).toBe('cfgRule');
  });

  it('takes an explicit sigma table (steps = its length − 1, no shift)', () => {
    const resolved = resolveSamplingRequest(wan21MiniCard, { ...base, sigmas: [1, 0.5, 0.2, 0] });
    expect(resolved.steps).toBe(3);
    expect(resolved.shift).toBeNull();
  });

  it('names the bad field', () => {
    expect(fieldOf({ ...base, seeds: [] })).toBe('seeds');
    expect(fieldOf({ ...base, seeds: [1.5] })).toBe('seeds');
    expect(fieldOf({ ...base, steps: 0 })).toBe('steps');
    expect(fieldOf({ ...base, sigmas: [1, 0.5, 0.7, 0] })).toBe('sigmas');
    expect(fieldOf({ ...base, shape: { frames: 1, height: 3, width: 4 } })).toBe('shape.height');
    expect(fieldOf({ ...base, sampler: 'sde', noiseLevel: 0 })).toBe('noiseLevel');
    expect(fieldOf({ ...base, guidanceScale: Number.NaN })).toBe('guidanceScale');
    expect(fieldOf({ ...base, sampler: 'ode', noiseLevel: 0 })).toBeUndefined();
    expect(fieldOf({ ...base, sigmas: [1, Number.NaN, 0] })).toBe('sigmas');
    // The formula's sigmas stop decreasing for a subnormal shift: the shift is named.
    expect(fieldOf({ ...base, shift: 5e-324 })).toBe('shift');
  });

  it('refuses SDE schedules the float32 numerics would not survive, naming the rule and step', () => {
    const detailsOf = (request: SamplingRequest): Record<string, unknown> => {
      try {
        resolveSamplingRequest(wan21MiniCard, request);
      } catch (error) {
        if (isFlowfleetError(error, 'MODEL_INVALID_REQUEST')) return error.details;
        throw error;
      }
      return {};
    };
    // The values that were accepted at the edge and failed on the worker.
    for (const noiseLevel of [5e-324, 1e-300]) {
      expect(detailsOf({ ...base, noiseLevel })).toMatchObject({
        field: 'noiseLevel',
        rule: 'noise_floor',
        step: 0,
      });
    }
    expect(detailsOf({ ...base, noiseLevel: 2.5 })).toMatchObject({ rule: 'mean_gain', step: 0 });
    expect(detailsOf({ ...base, steps: 2, shift: 10 })).toMatchObject({
      rule: 'mean_gain',
      step: 1,
    });
    // The same schedules are fine for the ODE sampler, which has no noise.
    expect(detailsOf({ ...base, sampler: 'ode', noiseLevel: 1e-300 })).toEqual({});
    expect(detailsOf({ ...base, sampler: 'ode', steps: 2, shift: 10 })).toEqual({});
  });
});
