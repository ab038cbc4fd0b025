import fc from 'fast-check';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { DEVICES } from './atoms.js';
import {
  canonicalRequirements,
  isLaneName,
  laneForRequirements,
  laneName,
  requirementsFor,
  requirementsHash,
  RequirementsSchema,
  type Requirements,
} from './requirements.js';
import { RolloutRequestSchema } from './rollout-request.js';

const request = (patch: Record<string, unknown> = {}) =>
  RolloutRequestSchema.parse({
    model: 'wan21-mini',
    prompt: 'a red ball',
    seeds: [1, 2],
    ...patch,
  });

/** What a wan21-style card derives for an SDE request with guidance. */
const CARD = { ops: ['flow_sde_step', 'cfg_combine'], componentKinds: ['text_encoder', 'dit'] };

describe('requirementsFor', () => {
  it("takes ops and component kinds from the card's capabilities, the rest from the request", () => {
    expect(requirementsFor(request(), CARD)).toEqual({
      model: 'wan21-mini',
      ops: ['cfg_combine', 'flow_sde_step'],
      components: ['dit', 'text_encoder'],
      devices: ['cpu', 'cuda', 'webgpu'],
      minArch: {},
      dtype: 'float32',
    });
  });

  it('names no op or component kind of its own', () => {
    const reqs = requirementsFor(request({ sampler: 'ode', guidanceScale: 1 }), {
      ops: ['rope_apply', 'flow_sde_step', 'rope_apply'],
      componentKinds: ['vae', 'unet'],
    });
    expect(reqs.ops).toEqual(['flow_sde_step', 'rope_apply']);
    expect(reqs.components).toEqual(['unet', 'vae']);
  });

  it('keeps minArch only for allowed devices and drops generic', () => {
    const reqs = requirementsFor(
      request({ constraints: { devices: ['cpu'], minArch: { cpu: 'generic', cuda: 'sm90' } } }),
      CARD,
    );
    expect(reqs.devices).toEqual(['cpu']);
    expect(reqs.minArch).toEqual({});
    expect(laneForRequirements(reqs)).toBe(
      laneForRequirements(requirementsFor(request({ constraints: { devices: ['cpu'] } }), CARD)),
    );
  });

  it("keeps the lane of a job that never names the adapter ('any' is left out)", () => {
    const any = requirementsFor(request({ constraints: { adapter: 'any' } }), CARD);
    expect(any).not.toHaveProperty('adapter');
    expect(laneForRequirements(any)).toBe(laneForRequirements(requirementsFor(request(), CARD)));
    expect(requirementsFor(request({ constraints: { adapter: 'hardware' } }), CARD).adapter).toBe(
      'hardware',
    );
    expect(requirementsHash({ ...BASE, adapter: 'any' })).toBe(requirementsHash(BASE));
  });

  it('leaves weight versions out of the lane', () => {
    expect(
      laneForRequirements(requirementsFor(request({ weights: { dit: { min: 7 } } }), CARD)),
    ).toBe(laneForRequirements(requirementsFor(request(), CARD)));
  });

  it('yields requirements that pass their own schema', () => {
    expect(RequirementsSchema.parse(requirementsFor(request(), CARD))).toEqual(
      requirementsFor(request(), CARD),
    );
  });
});

const BASE: Requirements = {
  model: 'wan21-mini',
  ops: ['flow_sde_step', 'cfg_combine'],
  components: ['text_encoder', 'dit'],
  devices: ['cuda', 'cpu'],
  minArch: { cpu: 'x86-64-v3', cuda: 'sm80' },
  dtype: 'float32',
};

describe('requirementsHash and lanes', () => {
  it('is insensitive to array order, duplicates and key order', () => {
    const permuted: Requirements = {
      dtype: 'float32',
      minArch: { cuda: 'sm80', cpu: 'x86-64-v3' },
      devices: ['cpu', 'cuda', 'cpu'],
      components: ['dit', 'text_encoder'],
      ops: ['cfg_combine', 'flow_sde_step', 'cfg_combine'],
      model: 'wan21-mini',
    };
    expect(requirementsHash(permuted)).toBe(requirementsHash(BASE));
    expect(canonicalRequirements(permuted)).toEqual(canonicalRequirements(BASE));
  });

  it.each([
    ['model', { model: 'wan21-big' }],
    ['an op', { ops: ['flow_match_step', 'cfg_combine'] }],
    ['a component kind', { components: ['dit'] }],
    ['a device', { devices: ['cpu'] }],
    ['a cpu minArch', { minArch: { cpu: 'x86-64-v4', cuda: 'sm80' } }],
    ['a cuda minArch', { minArch: { cpu: 'x86-64-v3', cuda: 'sm90' } }],
    ['the adapter (hardware)', { adapter: 'hardware' }],
    ['the adapter (software)', { adapter: 'software' }],
  ])('differs when %s differs', (_name, patch) => {
    expect(requirementsHash({ ...BASE, ...patch } as Requirements)).not.toBe(
      requirementsHash(BASE),
    );
  });

  it('is 16 hex digits and names a lane without ":"', () => {
    const hash = requirementsHash(BASE);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    const lane = laneForRequirements(BASE);
    expect(lane).toBe(`lane-${hash}`);
    expect(lane).not.toContain(':');
    expect(isLaneName(lane)).toBe(true);
    expect(isLaneName('lane:abc')).toBe(false);
  });

  it('canonical form is idempotent', () => {
    const once = canonicalRequirements(BASE);
    expect(canonicalRequirements(once)).toEqual(once);
  });

  it('rejects a malformed hash', () => {
    expect(() => laneName('ab:cd')).toThrow(/16 lowercase hex/);
    try {
      laneName('ABCDEF0123456789');
    } catch (error) {
      expect(isFlowfleetError(error, 'PROTO_INVALID_LANE')).toBe(true);
    }
  });
});

/** A shuffled copy of `values` under `order` (a permutation key per element). */
function shuffle<T>(values: readonly T[], order: readonly number[]): T[] {
  return values
    .map((value, i) => ({ value, key: order[i % order.length] ?? 0 }))
    .sort((a, b) => a.key - b.key)
    .map((entry) => entry.value);
}

/** The same object with its keys inserted in a shuffled order. */
function reorderKeys<T extends object>(value: T, order: readonly number[]): T {
  return Object.fromEntries(shuffle(Object.entries(value), order)) as T;
}

const requirementsArb: fc.Arbitrary<Requirements> = fc.record({
  model: fc.constantFrom('wan21-mini', 'wan21-big', 'm'),
  ops: fc.uniqueArray(fc.constantFrom('flow_sde_step', 'flow_match_step', 'cfg_combine', 'x_op'), {
    minLength: 1,
  }),
  components: fc.uniqueArray(fc.constantFrom('dit', 'text_encoder', 'vae')),
  devices: fc.uniqueArray(fc.constantFrom(...DEVICES), { minLength: 1 }),
  minArch: fc.record(
    {
      cpu: fc.constantFrom('generic', 'x86-64-v2', 'x86-64-v3', 'x86-64-v4', 'aarch64' as const),
      cuda: fc.constantFrom('sm70', 'sm80', 'sm90', 'sm100'),
    },
    { requiredKeys: [] },
  ),
  adapter: fc.constantFrom('any', 'hardware', 'software' as const),
  dtype: fc.constant('float32' as const),
});

describe('requirementsHash (property)', () => {
  it('is stable under key permutation and array shuffles with duplicates', () => {
    fc.assert(
      fc.property(
        requirementsArb,
        fc.array(fc.integer(), { minLength: 1, maxLength: 8 }),
        (reqs, order) => {
          const scrambled = reorderKeys(
            {
              ...reqs,
              ops: shuffle([...reqs.ops, ...reqs.ops.slice(0, 1)], order),
              components: shuffle(reqs.components, order),
              devices: shuffle([...reqs.devices, ...reqs.devices], order),
              minArch: reorderKeys(reqs.minArch, order),
            },
            order,
          );
          expect(requirementsHash(scrambled)).toBe(requirementsHash(reqs));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('maps different canonical requirements to different hashes', () => {
    fc.assert(
      fc.property(requirementsArb, requirementsArb, (a, b) => {
        const same =
          JSON.stringify(canonicalRequirements(a)) === JSON.stringify(canonicalRequirements(b));
        expect(requirementsHash(a) === requirementsHash(b)).toBe(same);
      }),
      { numRuns: 300 },
    );
  });
});
