import { describe, expect, it } from 'vitest';
import { wan21MiniCard, wan21MiniVaeCard } from '../wan21/wan21-mini-card.js';
import { isLatentsOnly, keptLatentSteps, selectedFrameIndices } from './rollout-outputs.js';

describe('what a rollout returns', () => {
  it('selects clip frames: none, first, every k (from 0), all', () => {
    expect(selectedFrameIndices('none', 33)).toEqual([]);
    expect(selectedFrameIndices('first', 33)).toEqual([0]);
    expect(selectedFrameIndices({ every: 4 }, 33)).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32]);
    expect(selectedFrameIndices({ every: 4 }, 5)).toEqual([0, 4]);
    expect(selectedFrameIndices('all', 5)).toEqual([0, 1, 2, 3, 4]);
  });

  it("keeps a window's inputs and outputs and always x_T", () => {
    expect(keptLatentSteps('all', 3)).toEqual([0, 1, 2, 3]);
    expect(keptLatentSteps({ fromStep: 0, steps: 2 }, 10)).toEqual([0, 1, 2, 10]);
    expect(keptLatentSteps({ fromStep: 8, steps: 2 }, 10)).toEqual([8, 9, 10]);
    expect(isLatentsOnly('none', 'all')).toBe(true);
    expect(isLatentsOnly('none', { fromStep: 0, steps: 1 })).toBe(false);
  });

  it("is checked by the card's request rules (MODEL_INVALID_REQUEST naming the field)", () => {
    const base = { prompt: 'p', seeds: [1], steps: 4 };
    const refused = (card: typeof wan21MiniCard, request: object, field: string) =>
      expect(() => card.resolveRequest({ ...base, ...request })).toThrow(
        expect.objectContaining({
          code: 'MODEL_INVALID_REQUEST',
          details: expect.objectContaining({ field }),
        }),
      );
    refused(wan21MiniCard, { decodeFrames: 'first' }, 'decodeFrames');
    refused(wan21MiniVaeCard, { decodeFrames: { every: 0 } }, 'decodeFrames.every');
    refused(wan21MiniVaeCard, { keepLatents: { fromStep: 3, steps: 2 } }, 'keepLatents');
    refused(wan21MiniVaeCard, { keepLatents: { fromStep: 0, steps: 0 } }, 'keepLatents.steps');
    const resolved = wan21MiniVaeCard.resolveRequest({
      ...base,
      decodeFrames: { every: 2 },
      keepLatents: { fromStep: 3, steps: 1 },
    });
    expect([resolved.decodeFrames, resolved.keepLatents]).toEqual([
      { every: 2 },
      { fromStep: 3, steps: 1 },
    ]);
    const defaults = wan21MiniCard.resolveRequest(base);
    expect([defaults.decodeFrames, defaults.keepLatents]).toEqual(['none', 'all']);
  });
});
