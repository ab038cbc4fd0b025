import type {
  ComponentForward,
  ComponentSpec,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import { ditForward } from '../reference/dit-forward.js';
import type { DitWorkspaceSlot } from '../reference/dit-forward.js';
import type { LatentDims } from '../reference/patchify.js';
import { textEncoderForward } from '../reference/text-encoder-forward.js';
import type { Wan21Config } from '../wan21-config.js';
import { requireDim, requireInput } from './component-inputs.js';

/** The `source` every TS reference component reports. */
export const CPU_REFERENCE_SOURCE = 'cpu-reference';

/** A card's component factory: the terminal rung of `buildComponent`. */
export type ComponentFactory = ComponentSpec<unknown, ComponentForward>['factory'];

/**
 * Factory of the TS reference DiT: inputs `latent` [B,C,F,H,W] f32, `timestep` [B] f32, `context`
 * [B,L,textDim] f32 → `velocity` [B,C,F,H,W] f32. Keeps the workspace of the last input sizes.
 */
export function createDitReferenceFactory(config: Wan21Config): ComponentFactory {
  return () => {
    const slot: DitWorkspaceSlot = {};
    return {
      kind: 'dit',
      source: CPU_REFERENCE_SOURCE,
      async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
        const latent = requireInput(inputs, 'latent', ['float32'], 5);
        const timestep = requireInput(inputs, 'timestep', ['float32'], 1);
        const context = requireInput(inputs, 'context', ['float32'], 3);
        const dims = latent.dims as unknown as LatentDims;
        requireDim('timestep', 0, timestep.dims[0]!, dims[0]);
        requireDim('context', 0, context.dims[0]!, dims[0]);
        requireDim('context', 2, context.dims[2]!, config.textDim);
        const velocity = ditForward(
          weights.tensors,
          config,
          {
            latent: latent.data as Float32Array,
            dims,
            timestep: timestep.data as Float32Array,
            context: context.data as Float32Array,
          },
          slot,
        );
        return { velocity: { dtype: 'float32', dims: [...dims], data: velocity } };
      },
      async dispose(): Promise<void> {
        delete slot.workspace;
      },
    };
  };
}

/**
 * Factory of the TS reference text encoder: input `tokens` [B, L] int32 or int64 → `context`
 * [B, L, textDim] f32.
 */
export function createTextEncoderReferenceFactory(config: Wan21Config): ComponentFactory {
  return () => ({
    kind: 'text_encoder',
    source: CPU_REFERENCE_SOURCE,
    async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
      const tokens = requireInput(inputs, 'tokens', ['int32', 'int64'], 2);
      requireDim('tokens', 1, tokens.dims[1]!, config.textLen);
      const data = tokens.data as Int32Array | BigInt64Array;
      const context = textEncoderForward(weights.tensors, data, config);
      const dims = [tokens.dims[0]!, config.textLen, config.textDim];
      return { context: { dtype: 'float32', dims, data: context } };
    },
    async dispose(): Promise<void> {},
  });
}
