import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { toJsonSchema } from './json-schema.js';
import { DEFAULT_LIMITS, resolveLimits } from './limits.js';
import { parseOrThrow } from './parse-or-throw.js';
import {
  DEFAULT_STEPS,
  RolloutRequestSchema,
  groupLatentElements,
  rolloutRequestSchema,
} from './rollout-request.js';

const EXAMPLE = {
  model: 'wan21-mini',
  prompt: 'a red ball',
  seeds: [1, 2, 3, 4],
  steps: 6,
  sampler: 'sde',
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  shift: 3,
  shape: { frames: 4, height: 16, width: 16 },
  weights: { dit: { min: 3 } },
  constraints: { devices: ['cpu'], minArch: { cuda: 'sm90' } },
};

const MINIMAL = { model: 'wan21-mini', prompt: 'a red ball', seeds: [7] };

/** The paths of every issue raised for `value`. */
function issuePaths(value: unknown, schema = RolloutRequestSchema): string[] {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

describe('RolloutRequestSchema', () => {
  it('parses the issue example as given, adding only the defaults it left out', () => {
    expect(RolloutRequestSchema.parse(EXAMPLE)).toEqual({
      ...EXAMPLE,
      negativePrompt: '',
      cfgRule: 'unless-one',
      waitForCapacity: false,
      constraints: { devices: ['cpu'], minArch: { cuda: 'sm90' }, adapter: 'any' },
      decodeFrames: 'none',
      keepLatents: 'all',
    });
  });

  it('fills every default for a minimal request (model, prompt, seeds)', () => {
    expect(RolloutRequestSchema.parse(MINIMAL)).toEqual({
      ...MINIMAL,
      negativePrompt: '',
      cfgRule: 'unless-one',
      steps: DEFAULT_STEPS,
      sampler: 'sde',
      guidanceScale: 4.5,
      noiseLevel: 0.7,
      shift: 3,
      shape: { frames: 4, height: 16, width: 16 },
      weights: {},
      constraints: { devices: ['cpu', 'cuda', 'webgpu'], minArch: {}, adapter: 'any' },
      waitForCapacity: false,
      decodeFrames: 'none',
      keepLatents: 'all',
    });
  });

  it('returns fresh default objects on every parse', () => {
    const a = RolloutRequestSchema.parse(MINIMAL);
    a.constraints.devices.push('cpu');
    a.shape.frames = 99;
    const b = RolloutRequestSchema.parse(MINIMAL);
    expect(b.constraints.devices).toEqual(['cpu', 'cuda', 'webgpu']);
    expect(b.shape.frames).toBe(4);
  });

  it.each([
    ['model', { model: 'Wan21:mini' }, 'model'],
    ['model missing', { model: undefined }, 'model'],
    ['prompt empty', { prompt: '' }, 'prompt'],
    ['seeds empty', { seeds: [] }, 'seeds'],
    ['seed negative', { seeds: [1, -1] }, 'seeds.1'],
    ['seed fractional', { seeds: [1.5] }, 'seeds.0'],
    ['seed ≥ 2^53', { seeds: [2 ** 53] }, 'seeds.0'],
    ['seeds duplicated', { seeds: [3, 3] }, 'seeds'],
    ['steps zero', { steps: 0 }, 'steps'],
    ['steps fractional', { steps: 2.5 }, 'steps'],
    ['sampler', { sampler: 'euler' }, 'sampler'],
    ['guidanceScale negative', { guidanceScale: -1 }, 'guidanceScale'],
    ['guidanceScale string', { guidanceScale: '4.5' }, 'guidanceScale'],
    ['noiseLevel zero', { noiseLevel: 0 }, 'noiseLevel'],
    // Accepted before, then −∞ log-probs on the worker (e² underflows).
    ['noiseLevel subnormal', { noiseLevel: 5e-324 }, 'noiseLevel'],
    ['noiseLevel 1e-300', { noiseLevel: 1e-300 }, 'noiseLevel'],
    ['noiseLevel below the noise floor', { noiseLevel: 2 ** -11 * 0.999 }, 'noiseLevel'],
    ['noiseLevel above 2', { noiseLevel: 2.0001 }, 'noiseLevel'],
    ['shift zero', { shift: 0 }, 'shift'],
    // Accepted before, then NUM_INVALID_ARGUMENT on the worker's sigmas.
    ['shift subnormal', { shift: 5e-324 }, 'shift'],
    ['shift below 2^-12', { shift: 2 ** -12 * 0.999 }, 'shift'],
    ['shift above 100', { shift: 100.5 }, 'shift'],
    ['shape frames zero', { shape: { frames: 0, height: 16, width: 16 } }, 'shape.frames'],
    ['shape missing width', { shape: { frames: 4, height: 16 } }, 'shape.width'],
    ['shape extra key', { shape: { frames: 4, height: 16, width: 16, depth: 1 } }, 'shape'],
    ['decodeFrames unknown name', { decodeFrames: 'some' }, 'decodeFrames'],
    ['decodeFrames every 0', { decodeFrames: { every: 0 } }, 'decodeFrames.every'],
    [
      'keepLatents negative start',
      { keepLatents: { fromStep: -1, steps: 1 } },
      'keepLatents.fromStep',
    ],
    ['keepLatents no steps', { keepLatents: { fromStep: 0, steps: 0 } }, 'keepLatents.steps'],
    ['weights min zero', { weights: { dit: { min: 0 } } }, 'weights.dit.min'],
    ['weights min and exact', { weights: { dit: { min: 1, exact: 2 } } }, 'weights.dit'],
    ['weights bad component', { weights: { 'Di:T': { min: 1 } } }, 'weights.Di:T'],
    ['devices unknown', { constraints: { devices: ['tpu'] } }, 'constraints.devices.0'],
    ['devices empty', { constraints: { devices: [] } }, 'constraints.devices'],
    ['minArch cpu', { constraints: { minArch: { cpu: 'x86-64-v5' } } }, 'constraints.minArch.cpu'],
    ['minArch cuda', { constraints: { minArch: { cuda: '9.0' } } }, 'constraints.minArch.cuda'],
    ['minArch webgpu', { constraints: { minArch: { webgpu: 'x' } } }, 'constraints.minArch'],
    ['constraints extra key', { constraints: { region: 'eu' } }, 'constraints'],
    ['adapter unknown', { constraints: { adapter: 'gpu' } }, 'constraints.adapter'],
    [
      'adapter software without webgpu',
      { constraints: { devices: ['cpu', 'cuda'], adapter: 'software' } },
      'constraints.adapter',
    ],
    ['waitForCapacity', { waitForCapacity: 'yes' }, 'waitForCapacity'],
    ['unknown top-level key', { priority: 1 }, ''],
  ])('rejects a bad %s with its path', (_name, patch, path) => {
    expect(issuePaths({ ...EXAMPLE, ...patch })).toContain(path);
  });

  it('accepts noiseLevel and shift at the ends of their ranges, and documents them', () => {
    for (const noiseLevel of [2 ** -11, 2]) {
      for (const shift of [2 ** -12, 100]) {
        expect(RolloutRequestSchema.safeParse({ ...MINIMAL, noiseLevel, shift }).success).toBe(
          true,
        );
      }
    }
    const properties = toJsonSchema(RolloutRequestSchema, { io: 'input' })['properties'] as Record<
      string,
      { minimum?: number; maximum?: number; description?: string }
    >;
    expect(properties['noiseLevel']).toMatchObject({ minimum: 2 ** -11, maximum: 2 });
    expect(properties['noiseLevel']?.description).toMatch(/2\^-11/);
    expect(properties['shift']).toMatchObject({ minimum: 2 ** -12, maximum: 100 });
    expect(properties['shift']?.description).toMatch(/2\^-12/);
  });

  it('accepts an exact weight requirement and every minArch form', () => {
    const parsed = RolloutRequestSchema.parse({
      ...MINIMAL,
      weights: { dit: { exact: 4 }, text_encoder: { min: 1 } },
      constraints: { minArch: { cpu: 'aarch64', cuda: 'sm100' } },
    });
    expect(parsed.weights).toEqual({ dit: { exact: 4 }, text_encoder: { min: 1 } });
    expect(parsed.constraints.minArch).toEqual({ cpu: 'aarch64', cuda: 'sm100' });
  });

  it('takes every adapter kind (software only with webgpu allowed)', () => {
    for (const adapter of ['any', 'hardware', 'software'] as const) {
      const parsed = RolloutRequestSchema.parse({
        ...MINIMAL,
        constraints: { devices: ['webgpu'], adapter },
      });
      expect(parsed.constraints.adapter).toBe(adapter);
    }
    expect(
      RolloutRequestSchema.parse({ ...MINIMAL, constraints: { adapter: 'software' } }).constraints
        .devices,
    ).toContain('webgpu');
  });
});

describe('explicit sigmas', () => {
  it('takes steps from the table when steps is not given', () => {
    const parsed = RolloutRequestSchema.parse({ ...MINIMAL, sigmas: [1, 0.6, 0.25, 0] });
    expect(parsed.steps).toBe(3);
    expect(parsed.sigmas).toEqual([1, 0.6, 0.25, 0]);
  });

  it('accepts a table that starts below 1', () => {
    expect(RolloutRequestSchema.parse({ ...MINIMAL, sigmas: [0.9, 0.1, 0] }).steps).toBe(2);
  });

  it.each([
    ['a length that is not steps + 1', { steps: 4, sigmas: [1, 0.5, 0] }, 'sigmas'],
    ['a first sigma above 1', { sigmas: [1.5, 0.5, 0] }, 'sigmas.0'],
    ['a last sigma that is not 0', { sigmas: [1, 0.5, 0.1] }, 'sigmas.2'],
    ['a table that does not strictly decrease', { sigmas: [1, 0.5, 0.5, 0] }, 'sigmas.2'],
    ['an increasing step', { sigmas: [1, 0.4, 0.6, 0] }, 'sigmas.2'],
    ['a single entry', { sigmas: [0] }, 'sigmas'],
  ])('rejects %s', (_name, patch, path) => {
    expect(issuePaths({ ...MINIMAL, ...patch })).toContain(path);
  });
});

describe('limits', () => {
  it('rejects steps above maxSteps', () => {
    expect(issuePaths({ ...MINIMAL, steps: DEFAULT_LIMITS.maxSteps + 1 })).toEqual(['steps']);
    expect(RolloutRequestSchema.parse({ ...MINIMAL, steps: DEFAULT_LIMITS.maxSteps }).steps).toBe(
      DEFAULT_LIMITS.maxSteps,
    );
  });

  it('rejects more seeds than maxGroupSize', () => {
    const seeds = Array.from({ length: DEFAULT_LIMITS.maxGroupSize + 1 }, (_, i) => i);
    expect(issuePaths({ ...MINIMAL, seeds })).toEqual(['seeds']);
  });

  it('takes a negative prompt under the prompt limit, a named CFG rule and a maxStaleness bound', () => {
    const parsed = RolloutRequestSchema.parse({
      ...MINIMAL,
      negativePrompt: 'blurry',
      cfgRule: 'above-one',
      weights: { dit: { maxStaleness: 2 } },
    });
    expect(parsed).toMatchObject({
      negativePrompt: 'blurry',
      cfgRule: 'above-one',
      weights: { dit: { maxStaleness: 2 } },
    });
    const narrow = rolloutRequestSchema(resolveLimits({ maxPromptChars: 4 }));
    expect(narrow.safeParse({ ...MINIMAL, prompt: 'abc', negativePrompt: 'abcde' }).success).toBe(
      false,
    );
    expect(RolloutRequestSchema.safeParse({ ...MINIMAL, cfgRule: 'always' }).success).toBe(false);
    expect(
      RolloutRequestSchema.safeParse({ ...MINIMAL, weights: { dit: { maxStaleness: -1 } } })
        .success,
    ).toBe(false);
  });

  it('rejects a prompt longer than maxPromptChars', () => {
    const prompt = 'x'.repeat(DEFAULT_LIMITS.maxPromptChars + 1);
    expect(issuePaths({ ...MINIMAL, prompt })).toEqual(['prompt']);
  });

  it('bounds the latent elements of the whole group', () => {
    // 16 seeds × 16×64×64 is exactly the default limit; one more frame is over.
    const seeds = Array.from({ length: 16 }, (_, i) => i);
    const atLimit = { ...MINIMAL, seeds, shape: { frames: 16, height: 64, width: 64 } };
    expect(groupLatentElements(16, atLimit.shape)).toBe(DEFAULT_LIMITS.maxLatentElements);
    expect(RolloutRequestSchema.safeParse(atLimit).success).toBe(true);
    const over = { ...atLimit, shape: { frames: 17, height: 64, width: 64 } };
    expect(issuePaths(over)).toEqual(['shape']);
    const oneSeedHuge = { ...MINIMAL, shape: { frames: 1, height: 2048, width: 1024 } };
    expect(issuePaths(oneSeedHuge)).toEqual(['shape']);
  });

  it('uses the limits given to the factory', () => {
    const schema = rolloutRequestSchema(resolveLimits({ maxSteps: 8, maxGroupSize: 2 }));
    expect(issuePaths({ ...MINIMAL, steps: 9 }, schema)).toEqual(['steps']);
    expect(issuePaths({ ...MINIMAL, seeds: [1, 2, 3] }, schema)).toEqual(['seeds']);
    expect(
      issuePaths({ ...MINIMAL, sigmas: Array.from({ length: 10 }, (_, i) => 1 - i / 9) }, schema),
    ).toEqual(['sigmas']);
    expect(schema.parse({ ...MINIMAL, steps: 8, seeds: [1, 2] }).steps).toBe(8);
  });

  it('reports every limit breach at once through parseOrThrow', () => {
    const bad = { ...MINIMAL, steps: 1000, seeds: [], prompt: '' };
    try {
      parseOrThrow(RolloutRequestSchema, bad, 'PROTO_INVALID_REQUEST', 'rollout request');
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'PROTO_INVALID_REQUEST')).toBe(true);
      const paths = (error as { details: { issues: { path: unknown[] }[] } }).details.issues.map(
        (issue) => issue.path.join('.'),
      );
      expect(paths.sort()).toEqual(['prompt', 'seeds', 'steps']);
    }
  });
});
