import { createHash } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { describe, expect, it } from 'vitest';
import { verifyWeightsBlob, type ExpectedBlob } from './blob-verifier.js';
import { componentShapes } from '../compute/model-host.js';

const card = wan21MiniCard;
const shapes = componentShapes(card, 'text_encoder');

function blobOf(tensors: Parameters<typeof encodeWeights>[0]): Uint8Array {
  return encodeWeights(tensors);
}

function expectedFor(bytes: Uint8Array): ExpectedBlob {
  return {
    component: 'text_encoder',
    version: 2,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sizeBytes: bytes.byteLength,
  };
}

function refusal(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    if (isFlowfleetError(error, 'WORKER_BLOB_REFUSED'))
      return (error.details as { reason: string }).reason;
    throw error;
  }
  return 'accepted';
}

describe('verifyWeightsBlob', () => {
  const good = blobOf(initWeights(card.config, 5, 'text_encoder'));

  it('accepts a blob whose bytes, hash and tensors match', () => {
    const tensors = verifyWeightsBlob(good, expectedFor(good), shapes);
    expect([...tensors.keys()].sort()).toEqual([...shapes.keys()].sort());
    // Views of the downloaded blob, not copies: the blob is not held twice.
    for (const tensor of tensors.values()) expect(tensor.data.buffer).toBe(good.buffer);
  });

  it('refuses on size, sha256, layout and tensor shape, naming the check', () => {
    const expected = expectedFor(good);
    expect(refusal(() => verifyWeightsBlob(good.subarray(1), expected, shapes))).toBe('size');
    const flipped = good.slice();
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    expect(refusal(() => verifyWeightsBlob(flipped, expected, shapes))).toBe('sha256');
    const garbage = new TextEncoder().encode('not a safetensors file at all');
    expect(refusal(() => verifyWeightsBlob(garbage, expectedFor(garbage), shapes))).toBe(
      'safetensors',
    );
    const dit = blobOf(initWeights(card.config, 5, 'dit'));
    expect(refusal(() => verifyWeightsBlob(dit, expectedFor(dit), shapes))).toBe('tensors');
  });
});
