import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { checkWeightsAgainstConfig, diffWeights } from './check-weights.js';
import { initWeights } from '../wan21/init-weights.js';
import { textEncoderParameterShapes } from '../wan21/parameter-shapes.js';
import { WAN21_MINI } from '../wan21/wan21-config.js';

const shapes = textEncoderParameterShapes(WAN21_MINI);

describe('checkWeightsAgainstConfig', () => {
  it('accepts a matching set', () => {
    const weights = initWeights(WAN21_MINI, 0, 'text_encoder');
    expect(() => checkWeightsAgainstConfig(weights, shapes)).not.toThrow();
    expect(diffWeights(weights, shapes)).toEqual({ missing: [], unexpected: [], wrongShape: [] });
  });

  it('lists missing, unexpected, wrong-shape and wrong-dtype tensors', () => {
    const weights = new Map<string, TensorData>(initWeights(WAN21_MINI, 0, 'text_encoder'));
    weights.delete('text_encoder.pos_embedding');
    weights.set('text_encoder.mlp.0.bias', {
      dtype: 'float32',
      dims: [127],
      data: new Float32Array(127),
    });
    weights.set('text_encoder.mlp.2.bias', {
      dtype: 'int32',
      dims: [64],
      data: new Int32Array(64),
    });
    weights.set('dit.stray', { dtype: 'float32', dims: [1], data: new Float32Array(1) });
    try {
      checkWeightsAgainstConfig(weights, shapes);
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'MODEL_WEIGHTS_MISMATCH')).toBe(true);
      const e = error as Error & { details: ReturnType<typeof diffWeights> };
      expect(e.details.missing).toEqual(['text_encoder.pos_embedding']);
      expect(e.details.unexpected).toEqual(['dit.stray']);
      expect(e.details.wrongShape.map((t) => t.name)).toEqual([
        'text_encoder.mlp.0.bias',
        'text_encoder.mlp.2.bias',
      ]);
      expect(e.message).toContain('missing: text_encoder.pos_embedding');
    }
  });
});
