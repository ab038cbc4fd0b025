import { isFlowfleetError } from '@flowfleet/errors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readRolloutFile } from './read-rollout-file.js';
import type { RolloutInvalidReason } from './rollout-error.js';
import type { RolloutMetadata } from './rollout-metadata.js';
import type { RolloutRecord } from './rollout-record.js';
import { writeRolloutFile } from './write-rollout-file.js';

function metadata(patch: Partial<RolloutMetadata> = {}): RolloutMetadata {
  return {
    model: 'm',
    loopId: 'l',
    prompt: 'p',
    negativePrompt: '',
    sampler: 'sde',
    steps: 2,
    group: 3,
    latentDims: [2, 1],
    noiseLevel: 0.7,
    guidanceScale: 1,
    shift: 3,
    weightsVersions: { dit: 1 },
    backend: { dit: 'cpu-reference' },
    platform: { device: 'cpu', arch: 'generic' },
    interceptors: [],
    ...patch,
  };
}

function record(meta: RolloutMetadata = metadata()): RolloutRecord {
  const { steps: t, group: g } = meta;
  const n = meta.latentDims.reduce((a, b) => a * b, 1);
  return {
    metadata: meta,
    latents: Float32Array.from({ length: (t + 1) * g * n }, (_, i) => i),
    logProbs:
      meta.sampler === 'sde' ? Float64Array.from({ length: t * g }, (_, i) => -i - 0.5) : null,
    seeds: Array.from({ length: g }, (_, i) => 10 + i),
    sigmas: Float64Array.from({ length: t + 1 }, (_, i) => 1 - i / t),
    timesteps: Float64Array.from({ length: t }, (_, i) => 1000 * (1 - i / t)),
    stepIndices: Int32Array.from({ length: t }, (_, i) => i),
  };
}

function reasonOf(run: () => unknown): RolloutInvalidReason | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (!isFlowfleetError(error, 'FMT_ROLLOUT_INVALID')) throw error;
    return error.details['reason'] as RolloutInvalidReason;
  }
}

describe('writeRolloutFile / readRolloutFile', () => {
  it('round-trips a record and gives step/sample accessors over its layout', () => {
    const file = readRolloutFile(writeRolloutFile(record()));
    expect(file.steps).toBe(2);
    expect(file.group).toBe(3);
    expect(file.sampleSize).toBe(2);
    expect(Array.from(file.latent(1, 2))).toEqual([10, 11]);
    expect(Array.from(file.finalLatent(0))).toEqual([12, 13]);
    expect(Array.from(file.logProbsOf(1)!)).toEqual([-1.5, -4.5]);
    expect(file.seeds).toEqual([10, 11, 12]);
    const outside = (() => {
      try {
        file.latent(3, 0);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(isFlowfleetError(outside, 'FMT_INVALID_ARGUMENT')).toBe(true);
  });

  it('holds no log-probs for ode (logProbsOf gives null)', () => {
    const file = readRolloutFile(writeRolloutFile(record(metadata({ sampler: 'ode' }))));
    expect(file.logProbs).toBeNull();
    expect(file.logProbsOf(0)).toBeNull();
  });

  it('keeps added optional metadata fields, and the bytes do not depend on key order', () => {
    const meta = { ...metadata(), maxStaleness: 2, cfgRule: 'above-one' as const };
    const reordered = Object.fromEntries(Object.entries(meta).reverse()) as RolloutMetadata;
    const bytes = writeRolloutFile(record(meta));
    expect(writeRolloutFile({ ...record(meta), metadata: reordered })).toEqual(bytes);
    expect(readRolloutFile(bytes).metadata).toEqual(meta);
  });

  it.each<[string, () => RolloutRecord, RolloutInvalidReason]>([
    [
      'log-probs for ode',
      () => ({ ...record(metadata({ sampler: 'ode' })), logProbs: new Float64Array(6) }),
      'unexpected-tensor',
    ],
    ['no log-probs for sde', () => ({ ...record(), logProbs: null }), 'missing-tensor'],
    ['T+1 timesteps', () => ({ ...record(), timesteps: new Float64Array(3) }), 'tensor-shape'],
    [
      'a NaN latent',
      () => ({ ...record(), latents: new Float32Array(18).fill(NaN) }),
      'non-finite',
    ],
    [
      'an infinite log-prob',
      () => ({ ...record(), logProbs: Float64Array.of(0, 0, 0, 0, 0, -Infinity) }),
      'non-finite',
    ],
    ['a negative seed', () => ({ ...record(), seeds: [1, -1, 2] }), 'seed-range'],
    ['a seed of 2^53', () => ({ ...record(), seeds: [1, 2 ** 53, 2] }), 'seed-range'],
    ['a 0 in latentDims', () => record(metadata({ latentDims: [0] })), 'rollout-schema'],
    [
      'a reserved metadata key',
      () => record({ ...metadata(), timings: {} } as RolloutMetadata),
      'rollout-schema',
    ],
  ])('refuses to write %s', (_, build, reason) => {
    expect(reasonOf(() => writeRolloutFile(build()))).toBe(reason);
  });

  it('reads back any valid record it writes, bit for bit (property)', () => {
    const metaArb = fc.record({
      sampler: fc.constantFrom('sde' as const, 'ode' as const),
      steps: fc.integer({ min: 1, max: 4 }),
      group: fc.integer({ min: 1, max: 4 }),
      latentDims: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }),
      prompt: fc.string({ unit: 'binary' }),
      guidanceScale: fc.double({ noNaN: true, noDefaultInfinity: true }),
      shift: fc.option(fc.double({ min: 0.1, max: 10, noNaN: true })),
      extra: fc.dictionary(
        fc.string({ minLength: 1 }).filter((k) => !(k in metadata())),
        fc.jsonValue(),
        { maxKeys: 2 },
      ),
    });
    fc.assert(
      fc.property(metaArb, fc.integer(), ({ extra, ...patch }, seed) => {
        fc.pre(
          ![
            'id',
            'latents',
            'logProbs',
            'seeds',
            'sigmas',
            'timesteps',
            'stepIndices',
            'worker',
            'timings',
            'captureStats',
          ].some((k) => k in extra),
        );
        const meta = { ...metadata(patch), ...extra } as RolloutMetadata;
        const base = record(meta);
        const latents = base.latents.map((_, i) => Math.fround(Math.sin(seed + i) * 1e3));
        const input = { ...base, latents };
        const bytes = writeRolloutFile(input);
        const file = readRolloutFile(bytes);
        expect(file.metadata).toEqual(JSON.parse(JSON.stringify(meta)));
        expect(file.latents).toEqual(latents);
        expect(file.logProbs).toEqual(input.logProbs);
        expect(writeRolloutFile(file)).toEqual(bytes);
      }),
      { numRuns: 200 },
    );
  });
});
