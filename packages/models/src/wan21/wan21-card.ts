import { FlowfleetError } from '@flowfleet/errors';
import { SOLVER_OP, type InputDims } from '@flowfleet/platform';
import {
  createDitReferenceFactory,
  createTextEncoderReferenceFactory,
  type ComponentFactory,
} from './components/reference-components.js';
import { initWeights, type Wan21Component } from './init-weights.js';
import { createOnnxArtifacts } from './onnx/onnx-artifacts.js';
import { parameterShapes, textEncoderParameterShapes } from './parameter-shapes.js';
import { invalidRequest, resolveSamplingRequest } from '../sampling/resolve-sampling-request.js';
import type {
  LatentSize,
  ResolvedSamplingRequest,
  SamplingDefaults,
  SamplingRequest,
} from '../sampling/sampling-request.js';
import type { Wan21Config } from './wan21-config.js';
import type { ModelCard, ModelComponentSpec } from '../cards/model-card.js';
import { createWan21DenoiseLoop, WAN21_DENOISE_LOOP_ID } from './loop/denoise-loop.js';
import { WAN21_DIT_CHECKPOINT_KEYS } from './wan21-checkpoint-keys.js';
import { createVaeDecoderComponent } from './vae/vae-component.js';
import type { WanVaeConfig } from './vae/vae-config.js';
import { createVaeFrameDecoder } from './vae/vae-frame-decoder.js';

/** The two components of a wan21 card. */
export type Wan21ComponentId = Wan21Component;

/**
 * Where a wan21 card's text context comes from: `tokens` — its own text encoder component encodes
 * the prompts (the toy byte-level encoder); `embeddings` — the request names uploaded embeddings
 * (umT5-XXL's, computed once per prompt by the trainer), and the card has no text encoder.
 */
export type Wan21TextInput = 'tokens' | 'embeddings';

/** How to build a card with the wan21 structure (dit [+ text_encoder], the CFG denoise loop). */
export interface Wan21CardOptions {
  readonly id: string;
  readonly config: Wan21Config;
  /** Default `tokens`. */
  readonly textInput?: Wan21TextInput;
  /** Whether a worker naming no models loads the card (default true). */
  readonly loadByDefault?: boolean;
  /** Per component: the terminal-rung factory (default: the TS reference in the worker pool). */
  readonly factories?: Partial<Record<Wan21ComponentId, ComponentFactory>>;
  /**
   * Default true: each component carries the ONNX artifacts of `config`; false: none, so the
   * ort-* builders refuse the components and their factories build them.
   */
  readonly onnx?: boolean;
  /** Default `breakable`; `eager` for components that cannot capture. */
  readonly graphCapture?: 'eager' | 'breakable';
  readonly sampling?: SamplingDefaults;
  readonly latent?: LatentSize;
  /**
   * A VAE decoder of this config as component `vae` (kind `vae_decoder`: the latent's frames, one
   * latent frame per forward; ONNX Runtime only). Its latent channels must be the DiT's.
   */
  readonly vae?: WanVaeConfig;
}

const DEFAULT_SAMPLING: SamplingDefaults = Object.freeze({
  steps: 8,
  shift: 3,
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  sampler: 'sde',
});

const DEFAULT_LATENT: LatentSize = Object.freeze({ frames: 4, height: 16, width: 16 });

/**
 * The wan21 request rules: the shared flow-matching rules, then a latent whose frames, height
 * and width are multiples of the DiT's patch (patchify needs whole patches).
 * @throws FlowfleetError MODEL_INVALID_REQUEST naming the field
 */
function resolveWan21Request(
  card: Pick<
    ModelCard<Wan21Config>,
    'config' | 'sampling' | 'latent' | 'textEmbeddings' | 'frameDecoder'
  >,
  request: SamplingRequest,
): ResolvedSamplingRequest {
  const resolved = resolveSamplingRequest(card, request);
  const [pt, ph, pw] = card.config.patch;
  const checks = [
    ['shape.frames', resolved.shape.frames, pt, 'frames'],
    ['shape.height', resolved.shape.height, ph, 'height'],
    ['shape.width', resolved.shape.width, pw, 'width'],
  ] as const;
  for (const [field, value, patch, axis] of checks) {
    if (value % patch !== 0) {
      throw invalidRequest(field, `must be a multiple of the patch ${axis} ${patch}`, value);
    }
  }
  return resolved;
}

/** The input dims of one forward of a wan21 component over `batch` samples of a `latent`. */
function wan21ForwardInputDims(
  config: Wan21Config,
  id: Wan21ComponentId,
  batch: number,
  latent: LatentSize,
): InputDims {
  if (id === 'text_encoder') return { tokens: [batch, config.textLen] };
  return {
    latent: [batch, config.inChannels, latent.frames, latent.height, latent.width],
    timestep: [batch],
    context: [batch, config.textLen, config.textDim],
  };
}

/** The ops of a wan21 rollout: the sampler's solver op, and cfg_combine when guidance is on. */
function wan21RequiredOps(request: ResolvedSamplingRequest): string[] {
  const ops: string[] = [request.sampler === 'ode' ? SOLVER_OP.euler : SOLVER_OP.sde];
  if (request.cfg) ops.push(SOLVER_OP.cfg);
  return ops;
}

/**
 * A card with the wan21 structure: a `dit` and (text input `tokens`) a `text_encoder` component
 * (TS reference factories and ONNX artifacts unless given), optionally a `vae` decoder, the
 * `diffusion_denoise` loop, Wan2.1 parameter shapes and initial weights of `config`, the DiT's
 * checkpoint key maps (diffusers names, trainer prefixes), and the wan21 request rules.
 */
export function createWan21Card(options: Wan21CardOptions): ModelCard<Wan21Config> {
  const { config } = options;
  const component = (
    id: Wan21ComponentId,
    reference: (config: Wan21Config) => ComponentFactory,
    shapes: (config: Wan21Config) => Map<string, number[]>,
  ): ModelComponentSpec =>
    Object.freeze({
      id,
      kind: id,
      factory: options.factories?.[id] ?? reference(config),
      ...(options.onnx === false ? {} : { onnx: createOnnxArtifacts(config, id) }),
      forwardInputDims: (batch: number, latent: LatentSize) =>
        wan21ForwardInputDims(config, id, batch, latent),
      latentSized: id === 'dit',
      parameterShapes: () => shapes(config),
      initWeights: (seed: number) => initWeights(config, seed, id),
      ...(id === 'dit' ? { checkpointKeys: WAN21_DIT_CHECKPOINT_KEYS } : {}),
    });
  if (options.vae !== undefined && options.vae.zDim !== config.inChannels) {
    throw new FlowfleetError(
      'MODEL_CONFIG_INVALID',
      `the VAE's zDim (${options.vae.zDim}) must be the DiT's latent channels (${config.inChannels})`,
      { details: { field: 'vae.zDim', value: options.vae.zDim, inChannels: config.inChannels } },
    );
  }
  const textInput = options.textInput ?? 'tokens';
  const card: ModelCard<Wan21Config> = Object.freeze({
    id: options.id,
    config,
    components: Object.freeze([
      component('dit', (c) => createDitReferenceFactory(c), parameterShapes),
      ...(textInput === 'tokens'
        ? [
            component(
              'text_encoder',
              (c) => createTextEncoderReferenceFactory(c),
              textEncoderParameterShapes,
            ),
          ]
        : []),
      ...(options.vae === undefined ? [] : [createVaeDecoderComponent(options.vae)]),
    ]),
    loops: Object.freeze([
      Object.freeze({
        loopId: WAN21_DENOISE_LOOP_ID,
        graphCapture: options.graphCapture ?? 'breakable',
        sharedWeightComponents: Object.freeze(['dit']),
        create: () => createWan21DenoiseLoop(config, textInput),
      }),
    ]),
    sampling: Object.freeze({ ...(options.sampling ?? DEFAULT_SAMPLING) }),
    latent: Object.freeze({ ...(options.latent ?? DEFAULT_LATENT) }),
    ...(textInput === 'embeddings'
      ? { textEmbeddings: Object.freeze({ dim: config.textDim, maxTokens: config.textLen }) }
      : {}),
    ...(options.vae === undefined ? {} : { frameDecoder: createVaeFrameDecoder(options.vae) }),
    loadByDefault: options.loadByDefault ?? true,
    resolveRequest: (request: SamplingRequest) => resolveWan21Request(card, request),
    requiredOps: wan21RequiredOps,
  });
  return card;
}
