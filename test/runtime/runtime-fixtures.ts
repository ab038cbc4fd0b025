// Shared set-up of the runtime tests: a platform with the cpu reference kernels on the test's
// own compute pool, wan21-mini weights as versioned WeightSets, and a ModelInstance on the card's
// TS reference components.
import { registerCpuBackend } from '@flowfleet/backends';
import { type ModelCard } from '@flowfleet/models';
import { initWeights, wan21MiniCard, type Wan21Config } from '@flowfleet/models/wan21';
import {
  createPlatform,
  type ComputePool,
  type Platform,
  type WeightSet,
} from '@flowfleet/platform';
import {
  createComponentRegistry,
  createKernelRegistry,
  type ComponentBuilder,
  type TupleRegistry,
} from '@flowfleet/registry';
import { ModelInstance, type RolloutRequest } from '@flowfleet/runtime';

export const card: ModelCard<Wan21Config> = wan21MiniCard;

/** A latent shape small enough that a TS reference forward takes a few ms. */
export const TINY_SHAPE = Object.freeze({ frames: 1, height: 4, width: 4 });

/**
 * A platform with the cpu reference kernels, the test's compute pool (the TS reference forwards
 * run there) and the given component registry (default: empty).
 */
export function cpuPlatform(
  pool: ComputePool,
  components?: TupleRegistry<ComponentBuilder>,
): Platform {
  const kernels = createKernelRegistry();
  registerCpuBackend({ kernels });
  return createPlatform({
    facts: { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' },
    kernels,
    components: components ?? createComponentRegistry(),
    pool,
  });
}

/** Deterministic weights of one component as the WeightSet of `version`. */
export function weightsOf(
  component: 'dit' | 'text_encoder',
  version: number,
  seed = version,
): WeightSet {
  return { id: `${component}@${version}`, tensors: initWeights(card.config, seed, component) };
}

/** A ModelInstance on the TS reference components with dit@1 and text_encoder@1. */
export function referenceInstance(
  pool: ComputePool,
  platform: Platform = cpuPlatform(pool),
): Promise<ModelInstance> {
  return ModelInstance.create({
    card,
    platform,
    weights: {
      dit: { version: 1, weights: weightsOf('dit', 1) },
      text_encoder: { version: 1, weights: weightsOf('text_encoder', 1) },
    },
  });
}

/** A small SDE group request (G = 2, 3 steps, CFG on). */
export function tinyRequest(overrides: Partial<RolloutRequest> = {}): RolloutRequest {
  return {
    prompt: 'a red fox in the snow',
    seeds: [11, 12],
    steps: 3,
    sampler: 'sde',
    guidanceScale: 4.5,
    shape: TINY_SHAPE,
    ...overrides,
  };
}

/** True when both arrays hold the same bits element by element (or both are null: no log-probs). */
export function sameBits(
  a: Float32Array | Float64Array | null,
  b: Float32Array | Float64Array | null,
): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length || a.constructor !== b.constructor) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.every((v, i) => v === y[i]);
}

/** A promise and its resolver, for ordering steps of concurrent rollouts without sleeps. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
