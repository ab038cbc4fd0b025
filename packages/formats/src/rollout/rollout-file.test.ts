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
            'video',
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

/** A v2 record: T = 2, G = 3, latent [2, 1]; x_1 and x_2 kept; frames 0 and 2 of a 3-frame 2×1 clip. */
function v2Record(): RolloutRecord {
  const meta = { ...metadata(), video: { frames: 3, height: 2, width: 1 } } as RolloutMetadata;
  return {
    ...record(meta),
    latents: Float32Array.from({ length: 2 * 3 * 2 }, (_, i) => i),
    latentSteps: Int32Array.of(1, 2),
    frameIndices: Int32Array.of(0, 2),
    frames: Uint8Array.from({ length: 3 * 2 * 2 * 1 * 3 }, (_, i) => i),
  };
}

describe('RolloutFile v2 (frames, a kept-steps window)', () => {
  it('writes v1 for a latents-only record and v2 when the record has video', () => {
    const version = (bytes: Uint8Array) => readRolloutFile(bytes).formatVersion;
    expect(version(writeRolloutFile(record()))).toBe('1');
    expect(version(writeRolloutFile(v2Record()))).toBe('2');
  });

  it('maps steps to kept rows and gives each sample its frames, channel-last', () => {
    const file = readRolloutFile(writeRolloutFile(v2Record()));
    expect(Array.from(file.latentSteps)).toEqual([1, 2]);
    expect(Array.from(file.latent(1, 2))).toEqual([4, 5]);
    expect(Array.from(file.finalLatent(0))).toEqual([6, 7]);
    expect(file.hasLatent(0)).toBe(false);
    expect(reasonOrCode(() => file.latent(0, 0))).toBe('FMT_INVALID_ARGUMENT');
    expect(file.video).toEqual({ frames: 3, height: 2, width: 1 });
    // sample 1, returned frame 1 (clip frame 2): bytes (1·2 + 1)·6 .. +6
    expect(Array.from(file.frame(1, 1))).toEqual([18, 19, 20, 21, 22, 23]);
    expect(reasonOrCode(() => file.frame(0, 2))).toBe('FMT_INVALID_ARGUMENT');
  });

  it.each<[string, () => RolloutRecord, RolloutInvalidReason]>([
    [
      'frames without video',
      () => ({ ...record(), frames: new Uint8Array(1) }),
      'unexpected-tensor',
    ],
    [
      'a window without video (v1)',
      () => ({ ...record(), latentSteps: Int32Array.of(1, 2) }),
      'unexpected-tensor',
    ],
    ['video without frames', () => ({ ...v2Record(), frames: null }), 'missing-tensor'],
    [
      'frames of the wrong size',
      () => ({ ...v2Record(), frames: new Uint8Array(35) }),
      'tensor-shape',
    ],
    [
      'a window without x_T',
      () => ({ ...v2Record(), latentSteps: Int32Array.of(0, 1) }),
      'latent-steps',
    ],
    [
      'a frame past the clip',
      () => ({ ...v2Record(), frameIndices: Int32Array.of(0, 3) }),
      'frame-indices',
    ],
  ])('refuses to write %s', (_, build, reason) => {
    expect(reasonOf(() => writeRolloutFile(build()))).toBe(reason);
  });
});

function reasonOrCode(run: () => unknown): string {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    return error.code;
  }
}
