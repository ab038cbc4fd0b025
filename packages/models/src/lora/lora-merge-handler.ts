/**
 * The LoRA merge in a compute thread (`LoraMerger` loads it into the worker's pool): one layer
 * per call, with `mergeLoraWeight` — the same function a trainer's check or a test calls, so the
 * merged bits do not depend on where the merge ran.
 */
import { sharedFloat32Array, tensorsReply, type ComputeHandlerFactory } from '@flowfleet/platform';
import { mergeLoraWeight, type LoraMergeInput } from './merge-lora.js';

export const createComputeHandler: ComputeHandlerFactory = () => {
  let merges = 0;
  return {
    handle(method: string, payload: unknown) {
      if (method !== 'merge') throw new Error(`unknown lora-merge method ${method}`);
      const input = payload as LoraMergeInput;
      const merged = mergeLoraWeight(
        input,
        sharedFloat32Array(input.outFeatures * input.inFeatures),
      );
      merges += 1;
      return tensorsReply({
        merged: { dtype: 'float32', dims: [input.outFeatures, input.inFeatures], data: merged },
      });
    },
    stats: () => ({ merges }),
  };
};
