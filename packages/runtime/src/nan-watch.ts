import { FlowfleetError } from '@flowfleet/errors';
import type { StepObserver } from './step-hooks.js';

/**
 * An observer that fails the rollout at the first NaN or infinity in any tensor a step returns,
 * naming the step, the tensor and the element index.
 * @throws FlowfleetError RT_NON_FINITE (from onStep)
 */
export function createNanWatch(): StepObserver & { readonly checkedSteps: number } {
  let checkedSteps = 0;
  return {
    name: 'nan-watch',
    get checkedSteps() {
      return checkedSteps;
    },
    onStep(step, result) {
      for (const [tensor, data] of Object.entries(result.tensors)) {
        for (let i = 0; i < data.length; i++) {
          if (!Number.isFinite(data[i]!)) {
            throw new FlowfleetError(
              'RT_NON_FINITE',
              `${step.kind} step ${step.index}: ${tensor}[${i}] is ${data[i]}`,
              {
                details: {
                  step: step.index,
                  kind: step.kind,
                  tensor,
                  index: i,
                  value: String(data[i]),
                },
              },
            );
          }
        }
      }
      checkedSteps++;
    },
  };
}
