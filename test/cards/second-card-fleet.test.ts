// Model cards own their model: a card defined only in this test tree (no text encoder, another
// channel count, its own component kind, loop and rules) runs end to end through a real fleet —
// a coordinator and a worker handed a card registry that contains it, the rollout enqueued
// through the SDK over HTTP, its lane's requirements derived from the card, its result fetched
// and read — with no change to the runtime, the worker or the coordinator.
import { FlowfleetClient } from '@flowfleet/client';
import { isFlowfleetError } from '@flowfleet/errors';
import { admissionSchema, admitRolloutRequest } from '@flowfleet/coordinator';
import { DEFAULT_LIMITS } from '@flowfleet/protocol';
import { createCardRegistry, DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { ComputePool } from '@flowfleet/platform';
import { ModelInstance, runRollout } from '@flowfleet/runtime';
import { INITIAL_WEIGHTS_SEED } from '@flowfleet/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { cpuPlatform, sameBits } from '../runtime/runtime-fixtures.js';
import { startTestFleet, TOKENS, type TestFleet } from '../worker/fleet-fixture.js';
import { createPixelFlowCard, PIXEL_FLOW_KIND } from './pixel-flow-card.js';

const card = createPixelFlowCard();
const cards = createCardRegistry([...DEFAULT_CARD_REGISTRY.cards, card]);

let server: RedisServer;
let fleet: TestFleet;
let trainer: FlowfleetClient;
let pool: ComputePool;

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  server = await startRedisServer();
  fleet = await startTestFleet(server.url, 'second-card', { cards });
  await fleet.startWorker({ cards, models: [card.id] });
  trainer = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
});

afterAll(async () => {
  await fleet?.close();
  await server?.stop();
  await pool?.close();
});

// An odd 5×7 latent: fine for this card (no patch), refused for wan21 (patch 2×2).
const REQUEST = {
  model: card.id,
  prompt: 'unconditional',
  seeds: [21, 22],
  steps: 3,
  guidanceScale: 1,
  shape: { frames: 1, height: 5, width: 7 },
};

async function codeOf(promise: Promise<unknown>): Promise<[string, unknown]> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return [error.code, error.details['error'] ?? error.details];
    throw error;
  }
  return ['no error', undefined];
}

describe('a second card through the fleet', () => {
  it('is enqueued through the SDK on a lane its card derived, completes and reads back', async () => {
    const enqueued = await trainer.enqueueRollouts(REQUEST);
    expect(enqueued.eligibleWorkers).toBe(1);
    const { lanes } = await trainer.lanes();
    expect(lanes.find((l) => l.lane === enqueued.lane)?.requirements).toMatchObject({
      model: card.id,
      ops: ['flow_sde_step'],
      components: [PIXEL_FLOW_KIND],
    });
    const status = await trainer.waitFor(enqueued.id, { timeoutMs: 20_000 });
    expect(status.status).toBe('completed');
    const file = await trainer.getResult(enqueued.id);
    expect(file.metadata).toMatchObject({ model: card.id, loopId: 'pixel_flow' });
    expect(file.latentDims).toEqual([3, 1, 5, 7]);
    expect(file.seeds).toEqual([21, 22]);
    expect(file.latents.every(Number.isFinite)).toBe(true);
    expect(file.logProbs?.every(Number.isFinite)).toBe(true);

    // The same rollout on a local instance of the card with the worker's version-0 weights, from
    // the request as the edge parsed it (the schema fills the card's defaults, e.g. shift 1).
    const spec = card.components[0]!;
    const local = await ModelInstance.create({
      card,
      platform: cpuPlatform(pool),
      weights: {
        velocity: {
          version: 0,
          weights: { id: 'local', tensors: spec.initWeights(INITIAL_WEIGHTS_SEED) },
        },
      },
    });
    try {
      // The request as the edge stores it: what it left out took the card's defaults.
      const parsed = admitRolloutRequest(
        REQUEST,
        admissionSchema(DEFAULT_LIMITS),
        cards,
        DEFAULT_LIMITS,
      ).request;
      expect(parsed.shift).toBe(card.sampling.shift);
      const expected = await runRollout(local, parsed);
      expect(file.metadata.shift).toBe(expected.record.metadata.shift);
      expect(sameBits(file.latents, expected.record.latents)).toBe(true);
      expect(sameBits(file.logProbs!, expected.record.logProbs!)).toBe(true);
    } finally {
      await local.close();
    }
  });

  it("refuses at the edge what the card's own rules refuse, before anything is queued", async () => {
    const [framesCode, framesDetails] = await codeOf(
      trainer.enqueueRollouts({ ...REQUEST, shape: { frames: 2, height: 4, width: 4 } }),
    );
    expect(framesCode).toBe('MODEL_INVALID_REQUEST');
    expect(framesDetails).toMatchObject({ field: 'shape.frames' });
    const [guidanceCode] = await codeOf(
      trainer.enqueueRollouts({ ...REQUEST, guidanceScale: 4.5 }),
    );
    expect(guidanceCode).toBe('MODEL_INVALID_REQUEST');
    // wan21's rule at the same edge: an odd height is not a whole number of 2×2 patches.
    const [wan21Code, wan21Details] = await codeOf(
      trainer.enqueueRollouts({ ...REQUEST, model: 'wan21-mini', guidanceScale: 4.5 }),
    );
    expect(wan21Code).toBe('MODEL_INVALID_REQUEST');
    expect(wan21Details).toMatchObject({ field: 'shape.height', value: 5 });
    const [unknownCode] = await codeOf(trainer.enqueueRollouts({ ...REQUEST, model: 'no-such' }));
    expect(unknownCode).toBe('MODEL_UNKNOWN_CARD');
  });
});
