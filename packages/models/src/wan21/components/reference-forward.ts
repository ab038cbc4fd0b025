import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData, TensorMap } from '@flowfleet/platform';
import { ditForward } from '../reference/dit-forward.js';
import type { DitForwardInputs, DitWorkspaceSlot } from '../reference/dit-forward.js';
import type { LatentDims } from '../reference/patchify.js';
import { textEncoderForward } from '../reference/text-encoder-forward.js';
import type { TokenIds } from '../reference/text-encoder-forward.js';
import type { Wan21Config } from '../wan21-config.js';
import { requireDim, requireInput } from '../../components/component-inputs.js';

/** The component kinds the TS reference implements. */
export type ReferenceKind = 'dit' | 'text_encoder';

/**
 * Checks a DiT forward's inputs (`latent` [B,C,F,H,W] f32, `timestep` [B] f32, `context`
 * [B,L,textDim] f32) and returns them as `ditForward` takes them.
 * @throws MODEL_INPUT_INVALID
 */
export function ditForwardInputs(config: Wan21Config, inputs: TensorMap): DitForwardInputs {
  const latent = requireInput(inputs, 'latent', ['float32'], 5);
  const timestep = requireInput(inputs, 'timestep', ['float32'], 1);
  const context = requireInput(inputs, 'context', ['float32'], 3);
  const dims = latent.dims as unknown as LatentDims;
  requireDim('timestep', 0, timestep.dims[0]!, dims[0]);
  requireDim('context', 0, context.dims[0]!, dims[0]);
  requireDim('context', 2, context.dims[2]!, config.textDim);
  return {
    latent: latent.data as Float32Array,
    dims,
    timestep: timestep.data as Float32Array,
    context: context.data as Float32Array,
  };
}

/**
 * Checks a text encoder's input (`tokens` [B, textLen] int32 or int64) and returns its ids.
 * @throws MODEL_INPUT_INVALID
 */
export function textEncoderTokens(config: Wan21Config, inputs: TensorMap): TensorData {
  const tokens = requireInput(inputs, 'tokens', ['int32', 'int64'], 2);
  requireDim('tokens', 1, tokens.dims[1]!, config.textLen);
  return tokens;
}

/** Checks a forward's inputs for `kind` without running it. @throws MODEL_INPUT_INVALID */
export function checkReferenceInputs(
  kind: ReferenceKind,
  config: Wan21Config,
  inputs: TensorMap,
): void {
  if (kind === 'dit') ditForwardInputs(config, inputs);
  else textEncoderTokens(config, inputs);
}

/**
 * One TS reference forward with the ONNX contract's names: dit → `velocity` [B,C,F,H,W] f32,
 * text_encoder → `context` [B, textLen, textDim] f32. The same function runs on the calling
 * thread and in the reference worker, so both give the same bits. `slot` keeps the DiT workspace
 * between calls of the same sizes.
 * @throws MODEL_INPUT_INVALID, MODEL_WEIGHTS_MISMATCH
 */
export function runReferenceForward(
  kind: ReferenceKind,
  config: Wan21Config,
  inputs: TensorMap,
  tensors: ReadonlyMap<string, TensorData>,
  slot: DitWorkspaceSlot,
): Record<string, TensorData> {
  if (kind === 'dit') {
    const forward = ditForwardInputs(config, inputs);
    const velocity = ditForward(tensors, config, forward, slot);
    return { velocity: { dtype: 'float32', dims: [...forward.dims], data: velocity } };
  }
  const tokens = textEncoderTokens(config, inputs);
  const context = textEncoderForward(tensors, tokens.data as TokenIds, config);
  const dims = [tokens.dims[0]!, config.textLen, config.textDim];
  return { context: { dtype: 'float32', dims, data: context } };
}

/** The inputs a forward of `kind` takes, with their ranks. */
const INPUT_RANKS: Readonly<Record<ReferenceKind, Readonly<Record<string, number>>>> = {
  dit: { latent: 5, timestep: 1, context: 3 },
  text_encoder: { tokens: 2 },
};

function dimsError(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_INPUT_INVALID', message, { details });
}

/**
 * Checks the input dims a forward is captured at: exactly the kind's input names, positive
 * integer dims of the right ranks, one batch size, and sizes that fit the config.
 * @throws MODEL_INPUT_INVALID
 */
export function checkCaptureDims(
  kind: ReferenceKind,
  config: Wan21Config,
  inputDims: Readonly<Record<string, readonly number[]>>,
): void {
  const ranks = INPUT_RANKS[kind];
  const names = Object.keys(inputDims).sort();
  const expected = Object.keys(ranks).sort();
  if (names.join() !== expected.join()) {
    throw dimsError(`a ${kind} is captured at inputs [${expected.join(', ')}]`, {
      given: names,
      expected,
    });
  }
  for (const [name, rank] of Object.entries(ranks)) {
    const dims = inputDims[name]!;
    if (dims.length !== rank || !dims.every((d) => Number.isSafeInteger(d) && d > 0)) {
      throw dimsError(`capture dims of ${name} must be ${rank} positive integers`, {
        input: name,
        dims: [...dims],
      });
    }
  }
  if (kind === 'text_encoder') {
    requireDim('tokens', 1, inputDims['tokens']![1]!, config.textLen);
    return;
  }
  const [B, C, F, H, W] = inputDims['latent']! as LatentDims;
  const [pt, ph, pw] = config.patch;
  requireDim('latent', 1, C, config.inChannels);
  if (F % pt !== 0 || H % ph !== 0 || W % pw !== 0) {
    throw dimsError('latent dims are not divisible by the patch', {
      input: 'latent',
      dims: [B, C, F, H, W],
      patch: config.patch,
    });
  }
  requireDim('timestep', 0, inputDims['timestep']![0]!, B);
  requireDim('context', 0, inputDims['context']![0]!, B);
  requireDim('context', 2, inputDims['context']![2]!, config.textDim);
}
