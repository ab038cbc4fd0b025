import { describe, expect, it } from 'vitest';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { DEFAULT_CARD_REGISTRY } from '../cards/card-registry.js';
import { shapeSize } from './parameter-shapes.js';
import { WAN21_T2V_1_3B_RECIPE, wan21T2v13bCard } from './wan21-t2v-1-3b-card.js';

const SHA = (c: string) => c.repeat(64);
const base = {
  prompt: 'a red fox',
  seeds: [1, 2, 3, 4],
  promptEmbeds: { sha256: SHA('a') },
  negativePromptEmbeds: { sha256: SHA('b') },
};

describe('the wan2.1-t2v-1.3b card', () => {
  it('is the published DiT: 1,418,996,800 parameters summed from its parameter shapes', () => {
    const [dit] = wan21T2v13bCard.components;
    let total = 0;
    for (const dims of dit!.parameterShapes().values()) total += shapeSize(dims);
    expect(total).toBe(1_418_996_800);
    const c = wan21T2v13bCard.config;
    expect([c.dim, c.layers, c.heads, c.ffnDim, c.inChannels]).toEqual([1536, 30, 12, 8960, 16]);
    expect([c.patch, c.textLen, c.textDim]).toEqual([[1, 2, 2], 512, 4096]);
    expect(dit!.parameterShapes().get('text_embedding.0.weight')).toEqual([1536, 4096]);
    expect(dit!.parameterShapes().get('blocks.29.ffn.0.weight')).toEqual([8960, 1536]);
  });

  it("builds the DiT's ONNX graph (eager: weights as inputs) with every parameter by name, without running it", () => {
    const [dit] = wan21T2v13bCard.components;
    const bytes = dit!.onnx!.buildOnnx({ form: 'eager' });
    const model = decodeOnnxModelSummary(bytes);
    expect(model.initializers).toEqual([]);
    const shapes = dit!.parameterShapes();
    expect(model.inputs.map((i) => i.name)).toEqual([
      'latent',
      'timestep',
      'context',
      'rope_cos',
      'rope_sin',
      ...shapes.keys(),
    ]);
    for (const input of model.inputs.slice(5)) expect(input.dims).toEqual(shapes.get(input.name));
    expect(model.inputs[0]!.dims).toEqual(['batch', 16, 'frames', 'height', 'width']);
    expect(model.inputs[2]!.dims).toEqual(['batch', 512, 4096]);
    // RoPE of head dim 128: 64 pairs.
    expect(model.inputs[3]!.dims).toEqual(['tokens', 64]);
    expect(model.outputs[0]).toEqual({
      name: 'velocity',
      elemType: 'float',
      dims: ['batch', 16, 'frames', 'height', 'width'],
    });
    // The forward inputs the card declares for the recipe's latent and a CFG batch of G = 4.
    expect(dit!.forwardInputDims(8, wan21T2v13bCard.latent)).toEqual({
      latent: [8, 16, 9, 30, 52],
      timestep: [8],
      context: [8, 512, 4096],
    });
  });

  it('takes embeddings: a dit and no text encoder, 512 × 4096 embeddings; the published VAE decodes', () => {
    expect(wan21T2v13bCard.components.map((c) => c.id)).toEqual(['dit', 'vae']);
    // 240 × 416 × 33 from its default latent 9 × 30 × 52 (flow_grpo's Wan2.1 video).
    expect(wan21T2v13bCard.frameDecoder?.clip({ frames: 9, height: 30, width: 52 })).toEqual({
      frames: 33,
      height: 240,
      width: 416,
    });
    expect(wan21T2v13bCard.textEmbeddings).toEqual({ dim: 4096, maxTokens: 512 });
    expect(wan21T2v13bCard.loadByDefault).toBe(false);
  });

  it("has flow_grpo's Wan2.1 recipe as its defaults", () => {
    expect(wan21T2v13bCard.sampling).toEqual({
      steps: 20,
      shift: 3,
      guidanceScale: 4.5,
      noiseLevel: 0.7,
      sampler: 'sde',
    });
    // 240 × 416 × 33 through the VAE (stride 4 in time, 8 in space).
    const { height, width, frames } = WAN21_T2V_1_3B_RECIPE.video;
    expect(wan21T2v13bCard.latent).toEqual({
      frames: (frames - 1) / 4 + 1,
      height: height / 8,
      width: width / 8,
    });
    expect(wan21T2v13bCard.latent).toEqual({ frames: 9, height: 30, width: 52 });
    expect(WAN21_T2V_1_3B_RECIPE.lora.r).toBe(32);
    expect(WAN21_T2V_1_3B_RECIPE.groupSize).toBe(4);
    const resolved = wan21T2v13bCard.resolveRequest(base);
    expect(resolved.steps).toBe(20);
    expect(resolved.cfg).toBe(true);
    expect(resolved.negativePrompt).toBe('');
    expect(resolved.promptEmbeds).toEqual({ sha256: SHA('a') });
    expect(resolved.negativePromptEmbeds).toEqual({ sha256: SHA('b') });
  });

  it('is registered, but not loaded by a worker that names no models', () => {
    expect(DEFAULT_CARD_REGISTRY.get('wan2.1-t2v-1.3b')).toBe(wan21T2v13bCard);
    expect(DEFAULT_CARD_REGISTRY.ids).toEqual([
      'wan21-mini',
      'wan21-mini-vae',
      'wan21-mini-embeds',
      'wan2.1-t2v-1.3b',
    ]);
    expect(DEFAULT_CARD_REGISTRY.defaultIds).toEqual(['wan21-mini']);
    expect(DEFAULT_CARD_REGISTRY.capabilities('wan2.1-t2v-1.3b', base)).toEqual({
      ops: ['flow_sde_step', 'cfg_combine'],
      componentKinds: ['dit', 'vae_decoder'],
    });
  });

  it('refuses a request without the embeddings it needs, or with a malformed reference', () => {
    const refused = (request: object, field: string) =>
      expect(() => wan21T2v13bCard.resolveRequest({ ...base, ...request })).toThrow(
        expect.objectContaining({
          code: 'MODEL_INVALID_REQUEST',
          details: expect.objectContaining({ field }),
        }),
      );
    refused({ promptEmbeds: undefined }, 'promptEmbeds');
    refused({ negativePromptEmbeds: undefined }, 'negativePromptEmbeds');
    refused({ promptEmbeds: { sha256: 'abc' } }, 'promptEmbeds');
    refused({ negativePromptEmbeds: { sha256: SHA('G') } }, 'negativePromptEmbeds');
    // Without CFG's unconditional branch the negative embedding is not needed (nor kept).
    const noCfg = wan21T2v13bCard.resolveRequest({
      ...base,
      negativePromptEmbeds: undefined,
      guidanceScale: 1,
    });
    expect(noCfg.cfg).toBe(false);
    expect(noCfg.negativePromptEmbeds).toBeUndefined();
    // A card that encodes prompts itself refuses embeddings rather than ignoring them.
    expect(() => DEFAULT_CARD_REGISTRY.get('wan21-mini').resolveRequest(base)).toThrow(
      expect.objectContaining({
        code: 'MODEL_INVALID_REQUEST',
        details: expect.objectContaining({ field: 'promptEmbeds' }),
      }),
    );
  });
});
