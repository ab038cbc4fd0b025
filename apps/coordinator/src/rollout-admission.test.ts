import { isFlowfleetError } from '@flowfleet/errors';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { resolveLimits } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { admissionSchema, admitRolloutRequest } from './rollout-admission.js';

// wan21-mini-vae: a 2×4×4 latent decodes to a 5-frame 32×32 clip, 3,072 bytes a frame.
const REQUEST = {
  model: 'wan21-mini-vae',
  prompt: 'a fox',
  seeds: [1, 2],
  steps: 2,
  shape: { frames: 2, height: 4, width: 4 },
};
const FRAME_BYTES = 32 * 32 * 3;

function admit(body: object, maxBlobBytes: number) {
  const limits = resolveLimits({ maxBlobBytes });
  return admitRolloutRequest(body, admissionSchema(limits), DEFAULT_CARD_REGISTRY, limits);
}

function refusal(run: () => unknown): { code: string; path: unknown } | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    const issues = (error.details as { issues?: { path: unknown }[] }).issues;
    return { code: error.code, path: issues?.[0]?.path };
  }
}

describe('admission of a request for frames', () => {
  it('stores the card-filled defaults (latents only) and the fields asked for', () => {
    const plain = admit(REQUEST, 1 << 20).request;
    expect([plain.decodeFrames, plain.keepLatents]).toEqual(['none', 'all']);
    const asked = admit(
      { ...REQUEST, decodeFrames: { every: 2 }, keepLatents: { fromStep: 1, steps: 1 } },
      1 << 20,
    );
    expect([asked.request.decodeFrames, asked.request.keepLatents]).toEqual([
      { every: 2 },
      { fromStep: 1, steps: 1 },
    ]);
  });

  it('refuses frames no result could hold (over maxBlobBytes), and takes them at the bound', () => {
    // `all`: 2 samples × 5 frames; `first`: 2 samples × 1 frame.
    const all = { ...REQUEST, decodeFrames: 'all' };
    expect(refusal(() => admit(all, 10 * FRAME_BYTES))).toBe('accepted');
    expect(refusal(() => admit(all, 10 * FRAME_BYTES - 1))).toEqual({
      code: 'PROTO_INVALID_REQUEST',
      path: ['decodeFrames'],
    });
    expect(refusal(() => admit({ ...REQUEST, decodeFrames: 'first' }, 10 * FRAME_BYTES - 1))).toBe(
      'accepted',
    );
    // Latents only: no frames, whatever the bound.
    expect(refusal(() => admit(REQUEST, 1))).toBe('accepted');
  });
});
