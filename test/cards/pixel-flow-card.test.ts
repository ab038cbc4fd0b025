// The second card through the generic runtime on its own: its loop, capture/replay, its rules.
import { isFlowfleetError } from '@flowfleet/errors';
import { createCardRegistry, DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { gaussianNoise } from '@flowfleet/numerics';
import { ComputePool } from '@flowfleet/platform';
import { ModelInstance, runRollout } from '@flowfleet/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuPlatform, sameBits } from '../runtime/runtime-fixtures.js';
import { createPixelFlowCard, PIXEL_FLOW_KIND, pixelFlowShapes } from './pixel-flow-card.js';

const card = createPixelFlowCard();
let pool: ComputePool;
let instance: ModelInstance;

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  const spec = card.components[0]!;
  instance = await ModelInstance.create({
    card,
    platform: cpuPlatform(pool),
    weights: {
      velocity: { version: 0, weights: { id: 'velocity@0', tensors: spec.initWeights(0) } },
    },
  });
});

afterAll(async () => {
  await instance?.close();
  await pool?.close();
});

const request = {
  prompt: 'unused',
  seeds: [3, 4],
  steps: 4,
  shape: { frames: 1, height: 5, width: 7 },
};

describe('a second card (pixel-flow) on the generic runtime', () => {
  it("runs its own loop on the card's terminal-rung component, capturing once and replaying", async () => {
    const result = await runRollout(instance, request);
    const { record } = result;
    expect(record.metadata.loopId).toBe('pixel_flow');
    expect(record.metadata.latentDims).toEqual([3, 1, 5, 7]);
    expect(record.metadata.backend).toEqual({ velocity: 'test-reference' });
    expect(result.captureStats).toMatchObject({ captures: 1, replays: 3, eagerBreaks: 0 });
    expect(result.timings.stepMs).toHaveLength(4);
    expect(record.latents).toHaveLength(5 * 2 * 3 * 35);
    expect(record.latents.subarray(0, 105)).toEqual(gaussianNoise(3, 0, 105));
    expect(record.latents.every(Number.isFinite)).toBe(true);
    expect(record.logProbs?.every(Number.isFinite)).toBe(true);
    const eager = await runRollout(instance, { ...request, graphCapture: 'off' });
    expect(sameBits(eager.record.latents, record.latents)).toBe(true);
    expect(sameBits(eager.record.logProbs!, record.logProbs!)).toBe(true);
    const ode = await runRollout(instance, { ...request, sampler: 'ode' });
    expect(ode.record.logProbs).toBeNull();
  });

  it('owns its parameter shapes, initial weights, kinds and ops', () => {
    const [spec] = card.components;
    expect(spec!.parameterShapes()).toEqual(pixelFlowShapes(card.config));
    expect([...spec!.initWeights(0).keys()]).toEqual([...pixelFlowShapes(card.config).keys()]);
    const cards = createCardRegistry([...DEFAULT_CARD_REGISTRY.cards, card]);
    // The shipped cards' kinds (a DiT, a text encoder, a VAE decoder) and this card's own.
    expect(cards.componentKinds()).toEqual(['dit', PIXEL_FLOW_KIND, 'text_encoder', 'vae_decoder']);
    expect(cards.capabilities(card.id, { ...request, guidanceScale: 1 })).toEqual({
      ops: ['flow_sde_step'],
      componentKinds: [PIXEL_FLOW_KIND],
    });
  });

  it('refuses with its own rules: one frame, no guidance', async () => {
    const fieldOf = async (patch: object): Promise<unknown> => {
      try {
        await runRollout(instance, { ...request, ...patch });
      } catch (error) {
        if (isFlowfleetError(error, 'MODEL_INVALID_REQUEST')) return error.details['field'];
        throw error;
      }
      return undefined;
    };
    expect(await fieldOf({ shape: { frames: 2, height: 4, width: 4 } })).toBe('shape.frames');
    expect(await fieldOf({ guidanceScale: 4.5 })).toBe('guidanceScale');
    expect(await fieldOf({ noiseLevel: 1e-300 })).toBe('noiseLevel');
  });
});
