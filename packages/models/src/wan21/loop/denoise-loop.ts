import { flowGrpoStdDev } from '@flowfleet/numerics';
import { SOLVER_OP } from '@flowfleet/platform';
import {
  DONE,
  type DrivenLoop,
  type LoopDone,
  type StepInstance,
  type StepResult,
  type WorkPlan,
} from '../../loop/loop-types.js';
import type { RolloutLoopRequest, RolloutTrajectory } from '../../loop/rollout-loop.js';
import type { RuntimeTensor } from '../../loop/runtime-tensor.js';
import { eagerIO, graphIO } from '../../loop/step-io.js';
import { FlowfleetError } from '@flowfleet/errors';
import { padTextEmbedding } from '../text-embeddings.js';
import { tokenize } from '../tokenize.js';
import type { Wan21Config } from '../wan21-config.js';
import type { Wan21TextInput } from '../wan21-card.js';
import {
  computeDenoiseStep,
  denoiseWorkspaceBytes,
  type DenoiseGeometry,
  type DenoiseInputs,
} from './denoise-step.js';
import { DenoiseLoopState } from './denoise-state.js';
import { computeEncodeStep, type EncodeStepResult } from './encode-step.js';

/** The loop id of the wan21 denoise loop (as the card's LoopSpec names it). */
export const WAN21_DENOISE_LOOP_ID = 'diffusion_denoise';

type StepOut =
  | EncodeStepResult
  | (StepResult & {
      readonly tensors: { readonly sample: Float32Array; readonly log_probs: Float64Array };
    });

/** Graph-key discriminators shared by every step of a request. */
function structureKey(geo: DenoiseGeometry): Record<string, string> {
  return { cfg: geo.cfg ? 'uncond+cond' : 'cond', expert: 'default', precision: 'f64' };
}

function f32(data: Float32Array, dims: readonly number[]): RuntimeTensor {
  return { dtype: 'float32', dims, data };
}

/**
 * The wan21 denoise loop (DESIGN.md §3–§4): the text context — one text-encode step (prompts
 * [uncond, cond] or [cond]) for text input `tokens`, the request's loaded embeddings zero-padded
 * to the text length for `embeddings` — then T denoise steps — CFG branches batched into one dit forward, cfg_combine, then
 * the Euler (ODE) or FlowGRPO SDE kernel per sample. Noise is a graph input, so SDE steps are
 * capturable.
 */
export function createWan21DenoiseLoop(
  config: Wan21Config,
  textInput: Wan21TextInput = 'tokens',
): DrivenLoop<RolloutLoopRequest, DenoiseLoopState, StepOut, RolloutTrajectory> {
  return {
    loopId: WAN21_DENOISE_LOOP_ID,
    init(request: RolloutLoopRequest, _instance: StepInstance): DenoiseLoopState {
      const { frames, height, width } = request.shape;
      const { cfg } = request;
      const group = request.seeds.length;
      const geometry: DenoiseGeometry = {
        group,
        latentDims: [config.inChannels, frames, height, width],
        sampleSize: config.inChannels * frames * height * width,
        textLen: config.textLen,
        textDim: config.textDim,
        cfg,
        batch: cfg ? 2 * group : group,
        sampler: request.sampler,
      };
      const state = new DenoiseLoopState(request, geometry);
      if (textInput === 'embeddings') state.context = embeddedContext(state, request);
      return state;
    },
    next(state: DenoiseLoopState): WorkPlan<StepOut> | LoopDone {
      if (state.context === undefined) return encodePlan(state);
      if (state.step >= state.request.steps) return DONE;
      return denoisePlan(state);
    },
    advance(state: DenoiseLoopState, result: StepOut): void {
      if (state.context === undefined) {
        state.context = batchContext(state, (result as EncodeStepResult).tensors.context);
        return;
      }
      const { sample, log_probs: logProbs } = (result as Exclude<StepOut, EncodeStepResult>)
        .tensors;
      const i = state.step;
      const n = state.geometry.group * state.geometry.sampleSize;
      state.latents = sample;
      state.trajectory.set(sample, (i + 1) * n);
      state.logProbs.set(logProbs, i * state.geometry.group);
      state.step++;
    },
    finalize(state: DenoiseLoopState): RolloutTrajectory {
      const steps = state.request.steps;
      return {
        group: state.geometry.group,
        latentDims: state.geometry.latentDims,
        latents: state.trajectory,
        logProbs: state.logProbs,
        sigmas: state.sigmas,
        timesteps: state.timesteps,
        stepIndices: Int32Array.from({ length: steps }, (_, i) => i),
      };
    },
  };

  function encodePlan(state: DenoiseLoopState): WorkPlan<StepOut> {
    const { request, geometry } = state;
    const prompts = geometry.cfg ? [request.negativePrompt, request.prompt] : [request.prompt];
    const dims = [prompts.length, config.textLen];
    // int64 ids, as the ONNX Gather takes them (the TS reference accepts either).
    const ids = BigInt64Array.from(tokenize(prompts, config), (id) => BigInt(id));
    const tokens: RuntimeTensor = { dtype: 'int64', dims, data: ids };
    return {
      step: { loopId: WAN21_DENOISE_LOOP_ID, kind: 'encode', index: 0 },
      components: ['text_encoder'],
      shapeSig: { kind: 'text_encode', dims: { tokens: dims }, dtype: 'int64' },
      capturable: true,
      graphKey: structureKey(geometry),
      workspaceBytes: 0,
      run: (instance) => computeEncodeStep(eagerIO(instance, 'text_encoder'), tokens),
      graphFn: (_instance, workspace) =>
        computeEncodeStep(graphIO(workspace, 'text_encoder'), workspace.input('tokens')),
      graphInputs: { tokens },
      graphComponents: { text_encoder: { tokens: dims } },
    };
  }

  function denoisePlan(state: DenoiseLoopState): WorkPlan<StepOut> {
    const { request, geometry: geo } = state;
    const i = state.step;
    const sigma = state.sigmas[i]!;
    const sigmaNext = state.sigmas[i + 1]!;
    const stdDevT =
      request.sampler === 'sde' ? flowGrpoStdDev(state.sigmas, i, request.noiseLevel) : 0;
    const timestep = new Float32Array(geo.batch).fill(state.timesteps[i]!);
    const scalars = Float64Array.of(sigma, sigmaNext, stdDevT, request.guidanceScale);
    const noise = request.sampler === 'sde' ? state.noiseFor(i) : undefined;
    const latentDims = [geo.group, ...geo.latentDims];
    const batchDims = [geo.batch, ...geo.latentDims];
    const contextDims = [geo.batch, geo.textLen, geo.textDim];
    const inputs: DenoiseInputs = {
      x: state.latents,
      timestep,
      context: state.context!,
      scalars,
      ...(noise === undefined ? {} : { noise }),
    };
    const graphInputs: Record<string, RuntimeTensor> = {
      x: f32(inputs.x, latentDims),
      timestep: f32(timestep, [geo.batch]),
      context: f32(inputs.context, contextDims),
      scalars: { dtype: 'float64', dims: [4], data: scalars },
    };
    if (noise !== undefined) graphInputs['noise'] = f32(noise, latentDims);
    const solver = request.sampler === 'sde' ? SOLVER_OP.sde : SOLVER_OP.euler;
    return {
      step: { loopId: WAN21_DENOISE_LOOP_ID, kind: 'denoise', index: i },
      components: ['dit'],
      shapeSig: {
        kind: 'denoise',
        dims: { latent: latentDims, context: contextDims },
        dtype: 'float32',
        extra: request.sampler,
      },
      capturable: true,
      graphKey: { ...structureKey(geo), sampler: request.sampler },
      workspaceBytes: denoiseWorkspaceBytes(geo),
      run: (instance, override) =>
        computeDenoiseStep(eagerIO(instance, 'dit'), geo, inputs, override),
      graphFn: (_instance, workspace) => {
        const bound: DenoiseInputs = {
          x: workspace.input('x').data as Float32Array,
          timestep: workspace.input('timestep').data as Float32Array,
          context: workspace.input('context').data as Float32Array,
          scalars: workspace.input('scalars').data as Float64Array,
          ...(noise === undefined ? {} : { noise: workspace.input('noise').data as Float32Array }),
        };
        return computeDenoiseStep(graphIO(workspace, 'dit'), geo, bound);
      },
      graphInputs,
      graphComponents: { dit: { latent: batchDims, timestep: [geo.batch], context: contextDims } },
      graphKernels: geo.cfg ? [SOLVER_OP.cfg, solver] : [solver],
    };
  }
}

/**
 * The context of a card whose text input is embeddings: the loaded embeddings ([uncond, cond] or
 * [cond]), each zero-padded to the text length, batched as the encode step's output is.
 * @throws FlowfleetError MODEL_INPUT_INVALID when an embedding the request needs was not loaded
 */
function embeddedContext(state: DenoiseLoopState, request: RolloutLoopRequest): Float32Array {
  const { textEmbeddings } = request;
  const config = { textLen: state.geometry.textLen, textDim: state.geometry.textDim };
  const needed = state.geometry.cfg
    ? [textEmbeddings?.negativePrompt, textEmbeddings?.prompt]
    : [textEmbeddings?.prompt];
  const row = config.textLen * config.textDim;
  const encoded = new Float32Array(needed.length * row);
  needed.forEach((embedding, i) => {
    if (embedding === undefined) {
      throw new FlowfleetError(
        'MODEL_INPUT_INVALID',
        'the rollout carries no loaded embedding for a prompt this card needs',
        { details: { input: 'textEmbeddings', cfg: state.geometry.cfg, index: i } },
      );
    }
    encoded.set(padTextEmbedding(embedding, config), i * row);
  });
  return batchContext(state, encoded);
}

/** The forward batch's context: [uncond ×G, cond ×G] with CFG, else [cond ×G]. */
function batchContext(state: DenoiseLoopState, encoded: Float32Array): Float32Array {
  const geo = state.geometry;
  const row = geo.textLen * geo.textDim;
  const context = new Float32Array(geo.batch * row);
  for (let b = 0; b < geo.batch; b++) {
    const prompt = geo.cfg ? Math.floor(b / geo.group) : 0;
    context.set(encoded.subarray(prompt * row, (prompt + 1) * row), b * row);
  }
  return context;
}
