import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import type { SafetensorsTensor } from './read-safetensors.js';
import { readRolloutFile } from './rollout-file.js';
import { writeSafetensors } from './write-safetensors.js';

const T = 3;
const G = 2;
const DIMS: readonly [number, number, number, number] = [2, 1, 2, 2]; // n = 8

/** A rollout file laid out like the runtime's writeRolloutResult (values encode their index). */
function rolloutTensors(): Record<string, SafetensorsTensor> {
  const n = DIMS.reduce((a, b) => a * b, 1);
  return {
    latents: {
      dtype: 'F32',
      shape: [T + 1, G, ...DIMS],
      data: Float32Array.from({ length: (T + 1) * G * n }, (_, i) => i),
    },
    log_probs: {
      dtype: 'F64',
      shape: [T, G],
      data: Float64Array.from({ length: T * G }, (_, i) => -i),
    },
    seeds: { dtype: 'I64', shape: [G], data: BigInt64Array.of(11n, 2n ** 40n) },
    sigmas: { dtype: 'F64', shape: [T + 1], data: Float64Array.of(1, 0.6, 0.3, 0) },
    step_indices: { dtype: 'I32', shape: [T], data: Int32Array.of(0, 1, 2) },
    timesteps: { dtype: 'F64', shape: [T], data: Float64Array.of(1000, 600, 300) },
  };
}

function rolloutMetadata(rollout: Record<string, unknown> = {}): Record<string, string> {
  return {
    format: 'flowfleet.rollout',
    format_version: '1',
    rollout: JSON.stringify({
      model: 'wan21-mini',
      sampler: 'sde',
      steps: T,
      group: G,
      latentDims: DIMS,
      weightsVersions: { dit: 2 },
      ...rollout,
    }),
  };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not a FlowfleetError';
  }
  return undefined;
}

describe('readRolloutFile', () => {
  it('exposes the layout through named accessors', () => {
    const file = readRolloutFile(writeSafetensors(rolloutTensors(), rolloutMetadata()));
    expect(file.steps).toBe(T);
    expect(file.group).toBe(G);
    expect(file.latentDims).toEqual(DIMS);
    expect(file.sampleSize).toBe(8);
    expect(file.metadata.model).toBe('wan21-mini');
    expect(file.metadata.weightsVersions).toEqual({ dit: 2 });
    expect(file.seeds).toEqual([11, 2 ** 40]);
    expect(file.sigmas).toEqual(Float64Array.of(1, 0.6, 0.3, 0));
    expect(file.timesteps).toEqual(Float64Array.of(1000, 600, 300));
    expect(file.stepIndices).toEqual(Int32Array.of(0, 1, 2));
    expect(file.latents.length).toBe((T + 1) * G * 8);
    // latent(step, sample) starts at (step·G + sample)·n.
    expect(Array.from(file.latent(0, 0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(file.latent(2, 1)[0]).toBe((2 * G + 1) * 8);
    expect(file.finalLatent(1)[7]).toBe((T * G + 1) * 8 + 7);
    // log_probs is [T, G]: sample 1's row is every other value.
    expect(Array.from(file.logProbsOf(1))).toEqual([-1, -3, -5]);
    expect(file.safetensors.metadata['format']).toBe('flowfleet.rollout');
  });

  it('reads a file whose metadata lacks the per-attempt fields and keeps unknown keys', () => {
    const file = readRolloutFile(
      writeSafetensors(rolloutTensors(), rolloutMetadata({ futureField: { a: 1 } })),
    );
    expect(file.metadata.timings).toBeUndefined();
    expect((file.metadata as Record<string, unknown>)['futureField']).toEqual({ a: 1 });
  });

  it('refuses out-of-range indices with CLIENT_INVALID_OPTIONS', () => {
    const file = readRolloutFile(writeSafetensors(rolloutTensors(), rolloutMetadata()));
    expect(codeOf(() => file.latent(T + 1, 0))).toBe('CLIENT_INVALID_OPTIONS');
    expect(codeOf(() => file.latent(0, G))).toBe('CLIENT_INVALID_OPTIONS');
    expect(codeOf(() => file.logProbsOf(-1))).toBe('CLIENT_INVALID_OPTIONS');
  });

  const without = (name: string) => {
    const tensors = rolloutTensors();
    delete tensors[name];
    return tensors;
  };
  it.each([
    ['another format', rolloutTensors(), { ...rolloutMetadata(), format: 'other' }],
    ['a newer format_version', rolloutTensors(), { ...rolloutMetadata(), format_version: '2' }],
    ['rollout metadata that is not JSON', rolloutTensors(), { ...rolloutMetadata(), rollout: '{' }],
    ['no group in the metadata', rolloutTensors(), rolloutMetadata({ group: undefined })],
    ['a missing tensor', without('log_probs'), rolloutMetadata()],
    ['a shape that disagrees with the metadata', rolloutTensors(), rolloutMetadata({ steps: 4 })],
    [
      'a wrong dtype',
      {
        ...rolloutTensors(),
        sigmas: { dtype: 'F32', shape: [T + 1], data: Float32Array.of(1, 0.6, 0.3, 0) },
      } as Record<string, SafetensorsTensor>,
      rolloutMetadata(),
    ],
    [
      'a negative seed',
      { ...rolloutTensors(), seeds: { dtype: 'I64', shape: [G], data: BigInt64Array.of(1n, -1n) } },
      rolloutMetadata(),
    ],
  ])('refuses %s with CLIENT_RESULT_INVALID', (_name, tensors, metadata) => {
    const bytes = writeSafetensors(tensors as Record<string, SafetensorsTensor>, metadata);
    expect(codeOf(() => readRolloutFile(bytes))).toBe('CLIENT_RESULT_INVALID');
  });
});
