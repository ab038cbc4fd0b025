// A wan21 card that declares a VAE decoder (component `vae`, kind `vae_decoder`: the shipped
// wan21-mini-vae) served by a real fleet: a worker on the ort-cpu backend builds it beside the DiT
// and the text encoder, the capability matrix shows the new kind on ort-cpu, and a latents-only
// request runs as before (decoded frames: test/cards/pixels-fleet.test.ts).
import { FlowfleetClient } from '@flowfleet/client';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { VAE_DECODER_KIND, wan21MiniVaeCard as card } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, TOKENS, type TestFleet } from '../worker/fleet-fixture.js';

const cards = DEFAULT_CARD_REGISTRY;

let server: RedisServer;
let fleet: TestFleet;
let trainer: FlowfleetClient;

beforeAll(async () => {
  server = await startRedisServer();
  fleet = await startTestFleet(server.url, 'vae-card', { cards });
  await fleet.startWorker({ cards, models: [card.id], backend: 'ort-cpu' });
  trainer = FlowfleetClient.create({ baseUrl: fleet.url, token: TOKENS.trainer });
});

afterAll(async () => {
  await fleet?.close();
  await server?.stop();
});

describe('a card with a VAE decoder on a fleet', () => {
  it('shows vae_decoder in the capability matrix on ort-cpu, and its rollouts complete', async () => {
    const matrix = await trainer.matrix();
    const vae = matrix.cells.filter(
      (c) => c.registry === 'component' && c.name === VAE_DECODER_KIND,
    );
    expect(vae).toContainEqual(expect.objectContaining({ device: 'cpu', liveWorkers: 1 }));
    const enqueued = await trainer.enqueueRollouts({
      model: card.id,
      prompt: 'a red fox',
      seeds: [1],
      steps: 2,
      guidanceScale: 1,
      shape: { frames: 2, height: 4, width: 4 },
    });
    const { lanes } = await trainer.lanes();
    expect(lanes.find((l) => l.lane === enqueued.lane)?.requirements.components).toContain(
      VAE_DECODER_KIND,
    );
    const status = await trainer.waitFor(enqueued.id, { timeoutMs: 30_000 });
    expect(status.status).toBe('completed');
    const file = await trainer.getResult(enqueued.id);
    expect(file.latentDims).toEqual([4, 2, 4, 4]);
  });
});
