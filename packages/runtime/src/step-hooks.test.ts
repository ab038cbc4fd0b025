import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { createNanWatch } from './nan-watch.js';
import { createResidualSkip } from './residual-skip.js';
import { checkInterceptors, type StepInterceptor } from './step-hooks.js';

const step = (index: number, kind = 'denoise') => ({ loopId: 'l', kind, index });

describe('interceptors and observers', () => {
  it('rejects two distribution-altering interceptors, allows one plus neutral ones', () => {
    const neutral: StepInterceptor = { name: 'trace', altersDistribution: false };
    expect(() =>
      checkInterceptors([createResidualSkip({ skipSteps: [1] }), neutral]),
    ).not.toThrow();
    let code: string | undefined;
    try {
      checkInterceptors([
        createResidualSkip({ skipSteps: [1] }),
        neutral,
        createResidualSkip({ skipSteps: [2] }),
      ]);
    } catch (error) {
      code = isFlowfleetError(error) ? error.code : undefined;
    }
    expect(code).toBe('RT_INTERCEPTOR_CONFLICT');
  });

  it('ResidualSkip reuses the previous velocity only on listed steps', () => {
    const skip = createResidualSkip({ skipSteps: [1, 2] });
    const v0 = Float32Array.of(1, 2);
    expect(skip.before!(step(0), undefined)).toBeUndefined();
    skip.after!(step(0), { tensors: { velocity: v0 } });
    expect(skip.before!(step(1), undefined)?.velocity).toBe(v0);
    skip.after!(step(1), { tensors: { velocity: v0 } });
    expect(skip.before!(step(2), undefined)?.velocity).toBe(v0);
    expect(skip.before!(step(3), undefined)).toBeUndefined();
    expect(skip.before!(step(1, 'encode'), undefined)).toBeUndefined();
    expect(skip.skipped).toEqual([1, 2]);
  });

  it('NaN watch names the step, tensor and index of the first non-finite value', () => {
    const watch = createNanWatch();
    watch.onStep(step(0), { tensors: { sample: Float32Array.of(1, 2) } }, 'replay');
    let details: unknown;
    try {
      watch.onStep(
        step(4),
        { tensors: { sample: Float32Array.of(1, Number.POSITIVE_INFINITY) } },
        'replay',
      );
    } catch (error) {
      if (isFlowfleetError(error, 'RT_NON_FINITE')) details = error.details;
    }
    expect(details).toMatchObject({ step: 4, tensor: 'sample', index: 1 });
    expect(watch.checkedSteps).toBe(1);
  });
});
