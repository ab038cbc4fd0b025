import { isFlowfleetError } from '@flowfleet/errors';
import { wan21MiniCard } from '@flowfleet/models';
import { linearShiftSigmas } from '@flowfleet/numerics';
import { describe, expect, it } from 'vitest';
import { resolveRolloutRequest, type RolloutRequest } from './rollout-request.js';

const base: RolloutRequest = { prompt: 'x', seeds: [1, 2] };

function fieldOf(request: RolloutRequest): string | undefined {
  try {
    resolveRolloutRequest(wan21MiniCard, request);
  } catch (error) {
    if (isFlowfleetError(error, 'RT_INVALID_REQUEST')) return String(error.details['field']);
    throw error;
  }
  return undefined;
}

describe('resolveRolloutRequest', () => {
  it('fills defaults from the card', () => {
    const resolved = resolveRolloutRequest(wan21MiniCard, base);
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

  it('takes an explicit sigma table (steps = its length − 1, no shift)', () => {
    const resolved = resolveRolloutRequest(wan21MiniCard, { ...base, sigmas: [1, 0.5, 0.2, 0] });
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
  });
});
