import { describe, expect, it } from 'vitest';
import { gaussianNoise } from '@flowfleet/numerics';
import { padTextEmbedding } from './text-embeddings.js';
import { createWan21DenoiseLoop } from './loop/denoise-loop.js';
import { createWan21Card } from './wan21-card.js';
import { WAN21_MINI } from './wan21-config.js';
import type { DenoiseLoopState } from './loop/denoise-state.js';
import type { StepInstance } from '../loop/loop-types.js';

const { textLen: LEN, textDim: DIM } = WAN21_MINI;
const card = createWan21Card({ id: 'embeds', config: WAN21_MINI, textInput: 'embeddings' });
const SHA = { sha256: 'a'.repeat(64) };

describe('padTextEmbedding (Wan: cut to the true length, then zero rows to text_len)', () => {
  it('keeps the L rows as given and appends exactly textLen − L zero rows', () => {
    const data = gaussianNoise(1, 0, 5 * DIM);
    const padded = padTextEmbedding({ tokens: 5, dim: DIM, data }, WAN21_MINI);
    expect(padded.length).toBe(LEN * DIM);
    expect(padded.subarray(0, 5 * DIM)).toEqual(data);
    expect(padded.subarray(5 * DIM).every((v) => Object.is(v, 0))).toBe(true);
    // A full-length embedding is unchanged.
    const full = gaussianNoise(2, 0, LEN * DIM);
    expect(padTextEmbedding({ tokens: LEN, dim: DIM, data: full }, WAN21_MINI)).toEqual(full);
  });

  it.each([
    ['more rows than the text length', { tokens: LEN + 1, dim: DIM }],
    ['no rows', { tokens: 0, dim: DIM }],
    ['another width', { tokens: 2, dim: DIM + 1 }],
  ])('refuses %s with MODEL_INPUT_INVALID', (_name, dims) => {
    const data = new Float32Array(dims.tokens * dims.dim);
    expect(() => padTextEmbedding({ ...dims, data }, WAN21_MINI)).toThrow(
      expect.objectContaining({ code: 'MODEL_INPUT_INVALID' }),
    );
  });

  it('is what the loop feeds the DiT: [uncond ×G, cond ×G], each zero-padded', () => {
    const prompt = { tokens: 3, dim: DIM, data: gaussianNoise(3, 0, 3 * DIM) };
    const negativePrompt = { tokens: 1, dim: DIM, data: gaussianNoise(4, 0, DIM) };
    const resolved = card.resolveRequest({
      prompt: 'p',
      seeds: [1, 2],
      promptEmbeds: SHA,
      negativePromptEmbeds: SHA,
    });
    const loop = createWan21DenoiseLoop(WAN21_MINI, 'embeddings');
    const state = loop.init(
      { ...resolved, textEmbeddings: { prompt, negativePrompt } },
      {} as StepInstance,
    ) as DenoiseLoopState;
    const row = LEN * DIM;
    const context = state.context!;
    expect(context.length).toBe(4 * row);
    const uncond = padTextEmbedding(negativePrompt, WAN21_MINI);
    const cond = padTextEmbedding(prompt, WAN21_MINI);
    for (const [b, expected] of [uncond, uncond, cond, cond].entries()) {
      expect(context.subarray(b * row, (b + 1) * row)).toEqual(expected);
    }
    // No encode step: the first plan is a denoise step.
    const plan = loop.next(state);
    expect('step' in plan && plan.step.kind).toBe('denoise');
    // A rollout that needs an embedding it was not given is refused, not run on zeros.
    expect(() =>
      loop.init({ ...resolved, textEmbeddings: { prompt } }, {} as StepInstance),
    ).toThrow(expect.objectContaining({ code: 'MODEL_INPUT_INVALID' }));
  });
});
