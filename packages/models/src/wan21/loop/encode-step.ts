import { FlowfleetError } from '@flowfleet/errors';
import type { StepResult } from '../../loop/loop-types.js';
import { asComponentTensor, type RuntimeTensor } from '../../loop/runtime-tensor.js';
import type { StepIO } from '../../loop/step-io.js';

/** The text-encode step's result: the context of each distinct prompt [P, L, textDim]. */
export interface EncodeStepResult extends StepResult {
  readonly tensors: { readonly context: Float32Array };
}

/** Runs the text encoder on `tokens` [P, L]; the returned context is a copy the caller owns. */
export async function computeEncodeStep(
  io: StepIO,
  tokens: RuntimeTensor,
): Promise<EncodeStepResult> {
  const out = await io.forward({ tokens: asComponentTensor(tokens) });
  const context = out['context'];
  if (context === undefined || !(context.data instanceof Float32Array)) {
    throw new FlowfleetError('INTERNAL_ERROR', 'the text encoder returned no float32 context', {
      details: { outputs: Object.keys(out) },
    });
  }
  return { tensors: { context: context.data.slice() } };
}
