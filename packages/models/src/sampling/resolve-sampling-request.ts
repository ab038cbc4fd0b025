import { FlowfleetError } from '@flowfleet/errors';
import { linearShiftSigmas, sdeScheduleIssue } from '@flowfleet/numerics';
import {
  CFG_RULES,
  runsUnconditionalBranch,
  type LatentSize,
  type ResolvedSamplingRequest,
  type SamplingDefaults,
  type SamplingRequest,
  type TextEmbeddingSpec,
  type TextEmbedsRef,
} from './sampling-request.js';
import type { FrameDecoder } from '../decode/frame-decoder.js';
import type { FrameSelection, LatentKeep } from './rollout-outputs.js';

/**
 * What the flow-matching rules fill defaults from: a card's sampling and latent defaults, and its
 * text-embedding spec when its text input is embeddings.
 */
export interface SamplingRequestDefaults {
  readonly sampling: SamplingDefaults;
  readonly latent: LatentSize;
  readonly textEmbeddings?: TextEmbeddingSpec | undefined;
  /** The card's frame decoder: a request may ask for frames only when it has one. */
  readonly frameDecoder?: FrameDecoder | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * The coded error of a request that breaks a card's rules; `field` names the request field.
 * @returns a FlowfleetError MODEL_INVALID_REQUEST
 */
export function invalidRequest(
  field: string,
  message: string,
  value: unknown,
  extra: Readonly<Record<string, unknown>> = {},
): FlowfleetError {
  return new FlowfleetError('MODEL_INVALID_REQUEST', `${field}: ${message}`, {
    details: { field, value: typeof value === 'number' ? value : String(value), ...extra },
  });
}

function positiveInt(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw invalidRequest(field, 'expected an integer ≥ 1', value);
  }
  return value;
}

function finite(field: string, value: number, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw invalidRequest(field, `expected a finite number ≥ ${min}`, value);
  }
  return value;
}

/** Checks a schedule: ≥ 2 finite entries, σ_0 ∈ (0, 1], strictly decreasing, σ_T ≥ 0. */
function checkSchedule(field: string, sigmas: Float64Array): Float64Array {
  if (sigmas.length < 2) throw invalidRequest(field, 'expected at least 2 entries', sigmas.length);
  if (!(sigmas[0]! <= 1 && sigmas[0]! > 0)) {
    throw invalidRequest(field, 'σ_0 must be in (0, 1]', sigmas[0]);
  }
  for (let i = 1; i < sigmas.length; i++) {
    if (!(sigmas[i]! < sigmas[i - 1]! && sigmas[i]! >= 0)) {
      throw invalidRequest(
        field,
        `sigmas must be strictly decreasing and ≥ 0 (index ${i})`,
        sigmas[i],
      );
    }
  }
  return sigmas;
}

function scheduleOf(request: SamplingRequest, defaults: SamplingDefaults): Float64Array {
  if (request.sigmas !== undefined)
    return checkSchedule('sigmas', Float64Array.from(request.sigmas));
  const shift = finite('shift', request.shift ?? defaults.shift, Number.MIN_VALUE);
  const steps = positiveInt('steps', request.steps ?? defaults.steps);
  // A shift so small that the formula's σ_i stop decreasing (e.g. 5e-324) is the shift's fault.
  return checkSchedule('shift', linearShiftSigmas(steps, shift));
}

/**
 * The flow-matching request rules every card shares: fills defaults from the card, checks seeds,
 * sampler, schedule (explicit or linear-shift, finite and strictly decreasing), latent size,
 * guidance and noise level, and for the SDE sampler that every step is one the float32 numerics
 * survive (numerics' `sdeScheduleIssue`: noise above the float32 resolution of the latent, no
 * step amplifying the latent). Cards add their own rules on top (e.g. a patch multiple).
 * @throws FlowfleetError MODEL_INVALID_REQUEST naming the field
 */
export function resolveSamplingRequest(
  defaults: SamplingRequestDefaults,
  request: SamplingRequest,
): ResolvedSamplingRequest {
  const { sampling } = defaults;
  if (typeof request.prompt !== 'string') {
    throw invalidRequest('prompt', 'expected a string', request.prompt);
  }
  if (request.seeds.length === 0) throw invalidRequest('seeds', 'expected at least one seed', 0);
  for (const seed of request.seeds) {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw invalidRequest('seeds', 'each seed must be an integer in [0, 2^53)', seed);
    }
  }
  const sampler = request.sampler ?? sampling.sampler;
  if (sampler !== 'ode' && sampler !== 'sde') {
    throw invalidRequest('sampler', "expected 'ode' or 'sde'", sampler);
  }
  const sigmas = scheduleOf(request, sampling);
  const shift = request.sigmas === undefined ? (request.shift ?? sampling.shift) : null;
  const latent = request.shape ?? defaults.latent;
  positiveInt('shape.frames', latent.frames);
  positiveInt('shape.height', latent.height);
  positiveInt('shape.width', latent.width);
  const guidanceScale = finite('guidanceScale', request.guidanceScale ?? sampling.guidanceScale, 0);
  const noiseLevel = finite('noiseLevel', request.noiseLevel ?? sampling.noiseLevel, 0);
  const cfgRule = request.cfgRule ?? 'unless-one';
  if (!CFG_RULES.includes(cfgRule)) {
    throw invalidRequest('cfgRule', `expected one of ${CFG_RULES.join(', ')}`, cfgRule);
  }
  if (sampler === 'sde') checkSdeSchedule(sigmas, noiseLevel);
  const cfg = runsUnconditionalBranch(cfgRule, guidanceScale);
  const embeds = embedsOf(defaults.textEmbeddings, request, cfg);
  const decodeFrames = frameSelectionOf(defaults.frameDecoder, request.decodeFrames ?? 'none');
  const keepLatents = latentKeepOf(request.keepLatents ?? 'all', sigmas.length - 1);
  return {
    prompt: request.prompt,
    negativePrompt: request.negativePrompt ?? '',
    ...embeds,
    seeds: [...request.seeds],
    steps: sigmas.length - 1,
    shift,
    sigmas,
    sampler,
    noiseLevel,
    guidanceScale,
    cfgRule,
    cfg,
    shape: { frames: latent.frames, height: latent.height, width: latent.width },
    decodeFrames,
    keepLatents,
  };
}

/** A frame selection: one of the names or `{every: k}` with k ≥ 1, and frames need a decoder. */
function frameSelectionOf(
  decoder: FrameDecoder | undefined,
  selection: FrameSelection,
): FrameSelection {
  if (typeof selection === 'object' && selection !== null) {
    positiveInt('decodeFrames.every', selection.every);
    selection = { every: selection.every };
  } else if (selection !== 'none' && selection !== 'first' && selection !== 'all') {
    throw invalidRequest(
      'decodeFrames',
      "expected 'none', 'first', 'all' or {every: k}",
      selection,
    );
  }
  if (selection !== 'none' && decoder === undefined) {
    throw invalidRequest(
      'decodeFrames',
      'this card has no frame decoder (VAE): it returns latents only',
      JSON.stringify(selection),
    );
  }
  return selection;
}

/** A latent window: `all`, or steps ≥ 1 from fromStep ≥ 0 that end at or before step T. */
function latentKeepOf(keep: LatentKeep, steps: number): LatentKeep {
  if (keep === 'all') return keep;
  if (typeof keep !== 'object' || keep === null) {
    throw invalidRequest('keepLatents', "expected 'all' or {fromStep, steps}", keep);
  }
  if (!Number.isSafeInteger(keep.fromStep) || keep.fromStep < 0) {
    throw invalidRequest('keepLatents.fromStep', 'expected an integer ≥ 0', keep.fromStep);
  }
  positiveInt('keepLatents.steps', keep.steps);
  if (keep.fromStep + keep.steps > steps) {
    throw invalidRequest(
      'keepLatents',
      `the window's steps ${keep.fromStep} … ${keep.fromStep + keep.steps - 1} must be within the rollout's ${steps}`,
      JSON.stringify(keep),
      { steps },
    );
  }
  return { fromStep: keep.fromStep, steps: keep.steps };
}

function checkSdeSchedule(sigmas: Float64Array, noiseLevel: number): void {
  if (noiseLevel === 0) {
    throw invalidRequest('noiseLevel', 'the SDE sampler needs a noise level > 0', noiseLevel);
  }
  if (sigmas.length > 2 && !(sigmas[1]! < 1)) {
    throw invalidRequest('sigmas', 'σ_1 must be below 1 for the SDE sampler', sigmas[1]);
  }
  const issue = sdeScheduleIssue(sigmas, noiseLevel);
  if (issue !== undefined) {
    throw invalidRequest('noiseLevel', issue.message, noiseLevel, {
      rule: issue.rule,
      step: issue.step,
      std: issue.std,
      coefX: issue.coefX,
    });
  }
}

function embedsRef(field: string, ref: TextEmbedsRef): TextEmbedsRef {
  if (typeof ref !== 'object' || typeof ref.sha256 !== 'string' || !SHA256_HEX.test(ref.sha256)) {
    throw invalidRequest(
      field,
      'expected { sha256 } naming an uploaded blob (64 hex)',
      ref?.sha256,
    );
  }
  return { sha256: ref.sha256 };
}

/**
 * The text-embedding references of a request: a card whose text input is embeddings needs the
 * prompt's, and the negative prompt's when CFG runs its unconditional branch (it cannot encode
 * text itself); a card that encodes prompts refuses them (they would be silently ignored).
 */
function embedsOf(
  spec: TextEmbeddingSpec | undefined,
  request: SamplingRequest,
  cfg: boolean,
): { promptEmbeds?: TextEmbedsRef; negativePromptEmbeds?: TextEmbedsRef } {
  const { promptEmbeds, negativePromptEmbeds } = request;
  if (spec === undefined) {
    if (promptEmbeds !== undefined || negativePromptEmbeds !== undefined) {
      const field = promptEmbeds !== undefined ? 'promptEmbeds' : 'negativePromptEmbeds';
      throw invalidRequest(
        field,
        'this card encodes prompts itself; it takes no embeddings',
        'set',
      );
    }
    return {};
  }
  if (promptEmbeds === undefined) {
    throw invalidRequest(
      'promptEmbeds',
      "required: this card's text input is embeddings",
      'absent',
    );
  }
  if (cfg && negativePromptEmbeds === undefined) {
    throw invalidRequest(
      'negativePromptEmbeds',
      'required when CFG runs its unconditional branch (an empty prompt is an embedding too)',
      'absent',
    );
  }
  return {
    promptEmbeds: embedsRef('promptEmbeds', promptEmbeds),
    ...(cfg && negativePromptEmbeds !== undefined
      ? { negativePromptEmbeds: embedsRef('negativePromptEmbeds', negativePromptEmbeds) }
      : {}),
  };
}
