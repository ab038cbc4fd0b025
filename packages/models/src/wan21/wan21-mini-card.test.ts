import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { gaussianNoise } from '@flowfleet/numerics';
import { ComputePool, createPlatform } from '@flowfleet/platform';
import type { ComponentForward, WeightSet } from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { initWeights } from './init-weights.js';
import { parameterShapes, textEncoderParameterShapes } from './parameter-shapes.js';
import { ditForward } from './reference/dit-forward.js';
import { textEncoderForward } from './reference/text-encoder-forward.js';
import { tokenize } from './tokenize.js';
import { WAN21_MINI } from './wan21-config.js';
import { DEFAULT_CARD_REGISTRY, createCardRegistry } from '../cards/card-registry.js';
import { wan21MiniCard } from './wan21-mini-card.js';

/** Bit-for-bit equality of two typed arrays (fast: compares bytes, not elements). */
function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

const ditWeights: WeightSet = { id: 'dit@0', tensors: initWeights(WAN21_MINI, 1, 'dit') };
const teWeights: WeightSet = { id: 'te@0', tensors: initWeights(WAN21_MINI, 1, 'text_encoder') };

let pool: ComputePool;
beforeAll(async () => {
  pool = await ComputePool.create();
});
afterAll(async () => {
  await pool.close();
});

async function build(id: 'dit' | 'text_encoder'): Promise<ComponentForward> {
  const spec = wan21MiniCard.components.find((c) => c.id === id)!;
  return spec.factory(spec, undefined, { pool });
}

describe('wan21MiniCard', () => {
  it('declares the components, loop and defaults of the card', () => {
    expect(wan21MiniCard.id).toBe('wan21-mini');
    expect(wan21MiniCard.config).toBe(WAN21_MINI);
    expect(wan21MiniCard.components.map((c) => [c.id, c.kind])).toEqual([
      ['dit', 'dit'],
      ['text_encoder', 'text_encoder'],
    ]);
    expect(wan21MiniCard.loops).toEqual([
      {
        loopId: 'diffusion_denoise',
        graphCapture: 'breakable',
        sharedWeightComponents: ['dit'],
        create: expect.any(Function),
      },
    ]);
    expect(wan21MiniCard.sampling).toEqual({
      steps: 8,
      shift: 3,
      guidanceScale: 4.5,
      noiseLevel: 0.7,
      sampler: 'sde',
    });
    expect(wan21MiniCard.latent).toEqual({ frames: 4, height: 16, width: 16 });
    for (const c of wan21MiniCard.components) expect(c.onnx).toBeDefined();
  });

  it('looks cards up by id and rejects unknown ids with MODEL_UNKNOWN_CARD', () => {
    expect(DEFAULT_CARD_REGISTRY.get('wan21-mini')).toBe(wan21MiniCard);
    expect(DEFAULT_CARD_REGISTRY.ids).toContain('wan21-mini');
    try {
      DEFAULT_CARD_REGISTRY.get('wan99');
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'MODEL_UNKNOWN_CARD')).toBe(true);
      expect((error as { details: { known: string[] } }).details.known).toContain('wan21-mini');
    }
    expect(() => createCardRegistry([wan21MiniCard, wan21MiniCard])).toThrow(
      expect.objectContaining({ code: 'MODEL_DUPLICATE_CARD' }),
    );
  });

  it('owns its parameter shapes and initial weights per component', () => {
    const [dit, te] = wan21MiniCard.components;
    expect(dit!.parameterShapes()).toEqual(parameterShapes(WAN21_MINI));
    expect(te!.parameterShapes()).toEqual(textEncoderParameterShapes(WAN21_MINI));
    const drawn = dit!.initWeights(1);
    expect([...drawn.keys()]).toEqual([...ditWeights.tensors.keys()]);
    for (const [name, tensor] of drawn) {
      expect(sameBits(tensor.data, ditWeights.tensors.get(name)!.data)).toBe(true);
    }
  });

  it("derives a request's ops from its sampler and guidance, and refuses an odd latent", () => {
    const base = { prompt: 'x', seeds: [1] };
    const caps = (request: object) =>
      DEFAULT_CARD_REGISTRY.capabilities('wan21-mini', { ...base, ...request });
    expect(caps({})).toEqual({
      ops: ['flow_sde_step', 'cfg_combine'],
      componentKinds: ['dit', 'text_encoder'],
    });
    expect(caps({ sampler: 'ode', guidanceScale: 1 }).ops).toEqual(['flow_match_step']);
    expect(() => caps({ shape: { frames: 1, height: 7, width: 8 } })).toThrow(
      expect.objectContaining({
        code: 'MODEL_INVALID_REQUEST',
        details: expect.objectContaining({ field: 'shape.height', value: 7 }),
      }),
    );
    expect(() => DEFAULT_CARD_REGISTRY.capabilities('wan99', base)).toThrow(
      expect.objectContaining({ code: 'MODEL_UNKNOWN_CARD' }),
    );
  });

  it('builds through the platform as the terminal (card factory) rung', async () => {
    const platform = createPlatform({
      facts: { device: 'cpu', arch: 'generic', features: [] },
      kernels: createKernelRegistry(),
      components: createComponentRegistry(),
      pool,
    });
    const spec = wan21MiniCard.components[0]!;
    const built = await platform.buildComponent<unknown, ComponentForward>(spec, undefined);
    expect(built.source).toBe('card');
    expect(built.component.kind).toBe('dit');
    expect(built.component.source).toBe('cpu-reference');
    await built.component.dispose();
  });

  it('runs text_encoder (int64 and int32 tokens) then dit with the ONNX contract names', async () => {
    const te = await build('text_encoder');
    const dit = await build('dit');
    const ids = tokenize(['a red fox', ''], WAN21_MINI);
    const asInt64 = BigInt64Array.from(ids, (v) => BigInt(v));
    const out64 = await te.run(
      { tokens: { dtype: 'int64', dims: [2, 16], data: asInt64 } },
      teWeights,
    );
    const out32 = await te.run({ tokens: { dtype: 'int32', dims: [2, 16], data: ids } }, teWeights);
    expect(Object.keys(out64)).toEqual(['context']);
    expect(out64['context']!.dims).toEqual([2, 16, 64]);
    expect(sameBits(out64['context']!.data, out32['context']!.data)).toBe(true);
    expect(
      sameBits(out64['context']!.data, textEncoderForward(teWeights.tensors, ids, WAN21_MINI)),
    ).toBe(true);

    const latent = gaussianNoise(3, 0, 2 * 4 * 4 * 16 * 16);
    const timestep = new Float32Array([1000, 250]);
    const result = await dit.run(
      {
        latent: { dtype: 'float32', dims: [2, 4, 4, 16, 16], data: latent },
        timestep: { dtype: 'float32', dims: [2], data: timestep },
        context: out64['context']!,
      },
      ditWeights,
    );
    expect(Object.keys(result)).toEqual(['velocity']);
    expect(result['velocity']!.dims).toEqual([2, 4, 4, 16, 16]);
    expect(result['velocity']!.dtype).toBe('float32');
    const direct = ditForward(ditWeights.tensors, WAN21_MINI, {
      latent,
      dims: [2, 4, 4, 16, 16],
      timestep,
      context: out64['context']!.data as Float32Array,
    });
    expect(sameBits(result['velocity']!.data, direct)).toBe(true);
    await dit.dispose();
    await te.dispose();
  });

  it('rejects malformed inputs with MODEL_INPUT_INVALID (as a rejected promise)', async () => {
    const dit = await build('dit');
    const te = await build('text_encoder');
    const latent = {
      dtype: 'float32' as const,
      dims: [1, 4, 4, 16, 16],
      data: new Float32Array(4096),
    };
    const timestep = { dtype: 'float32' as const, dims: [1], data: new Float32Array(1) };
    const context = { dtype: 'float32' as const, dims: [1, 16, 64], data: new Float32Array(1024) };
    const invalid = { code: 'MODEL_INPUT_INVALID' };
    await expect(dit.run({ latent, timestep }, ditWeights)).rejects.toMatchObject(invalid);
    await expect(
      dit.run(
        {
          latent,
          timestep,
          context: { ...context, dims: [1, 16, 32], data: new Float32Array(512) },
        },
        ditWeights,
      ),
    ).rejects.toMatchObject(invalid);
    await expect(
      dit.run(
        { latent, timestep: { ...timestep, dims: [2], data: new Float32Array(2) }, context },
        ditWeights,
      ),
    ).rejects.toMatchObject(invalid);
    await expect(
      dit.run({ latent: { ...latent, data: new Float32Array(5) }, timestep, context }, ditWeights),
    ).rejects.toMatchObject(invalid);
    await expect(
      dit.run(
        { latent, timestep: { dtype: 'int32', dims: [1], data: new Int32Array(1) }, context },
        ditWeights,
      ),
    ).rejects.toMatchObject(invalid);
    await expect(
      te.run({ tokens: { dtype: 'int32', dims: [1, 8], data: new Int32Array(8) } }, teWeights),
    ).rejects.toMatchObject(invalid);
    await expect(
      te.run(
        { tokens: { dtype: 'int32', dims: [1, 16], data: new Int32Array(16).fill(257) } },
        teWeights,
      ),
    ).rejects.toMatchObject(invalid);
    await expect(dit.run({ latent, timestep, context }, teWeights)).rejects.toMatchObject({
      code: 'MODEL_WEIGHTS_MISMATCH',
    });
  });
});
