import { gaussianNoise } from '@flowfleet/numerics';
import { sharedTensor, type TensorData } from '@flowfleet/platform';
import { parameterShapes, shapeSize, textEncoderParameterShapes } from './parameter-shapes.js';
import type { Wan21Config } from './wan21-config.js';

/** The weight-carrying components of a wan21 card. */
export type Wan21Component = 'dit' | 'text_encoder';

/**
 * Noise-stream offset of the text encoder, so the two components never share a Philox stream for
 * the same seed (the DiT uses streams 0..k-1, the text encoder TEXT_ENCODER_STREAM_BASE + 0..).
 */
export const TEXT_ENCODER_STREAM_BASE = 0x10000;

/** Scale of the small perturbations: biases, modulation tables, norm-weight offsets. */
const SMALL = 0.02;

/** How one tensor is drawn: value = offset + scale · N(0, 1). */
interface InitRule {
  readonly scale: number;
  readonly offset: number;
}

function ruleFor(name: string, dims: readonly number[]): InitRule {
  if (name.endsWith('.bias') || name.endsWith('modulation')) return { scale: SMALL, offset: 0 };
  if (/norm(_q|_k|3)\.weight$/.test(name)) return { scale: SMALL, offset: 1 };
  if (name.endsWith('token_embedding.weight')) return { scale: 1, offset: 0 };
  if (name.endsWith('pos_embedding')) return { scale: 0.1, offset: 0 };
  // Linear and Conv3d weights: fan_in is everything after the output dim.
  const fanIn = shapeSize(dims.slice(1));
  return { scale: 1 / Math.sqrt(fanIn), offset: 0 };
}

/**
 * One tensor of `initWeights`: the tensor at `sortedIndex` in the name-sorted list of its
 * component (stream base `streamBase`), drawn and scaled as `initWeights` does, so a checkpoint
 * writer can make a multi-GB set tensor by tensor.
 */
export function initTensor(
  seed: number,
  name: string,
  dims: readonly number[],
  sortedIndex: number,
  streamBase = 0,
): Float32Array {
  const { scale, offset } = ruleFor(name, dims);
  const data = gaussianNoise(seed, streamBase + sortedIndex, shapeSize(dims));
  for (let i = 0; i < data.length; i++) data[i] = offset + scale * data[i]!;
  return data;
}

/**
 * Deterministic weights from a seed: tensor i of the name-sorted list is drawn from Philox stream
 * i (plus TEXT_ENCODER_STREAM_BASE for the text encoder) and scaled so activations stay O(1):
 * Linear/Conv weights N(0, 1/fan_in), biases and modulation N(0, 0.02²), norm weights
 * 1 + N(0, 0.02²), token embeddings N(0, 1), position embeddings N(0, 0.1²).
 */
export function initWeights(
  config: Wan21Config,
  seed: number,
  component: Wan21Component,
): Map<string, TensorData> {
  const shapes = component === 'dit' ? parameterShapes(config) : textEncoderParameterShapes(config);
  const streamBase = component === 'dit' ? 0 : TEXT_ENCODER_STREAM_BASE;
  const names = [...shapes.keys()].sort();
  const weights = new Map<string, TensorData>();
  names.forEach((name, index) => {
    const dims = shapes.get(name)!;
    const data = initTensor(seed, name, dims, index, streamBase);
    // Shared one tensor at a time (`sharedTensor`): a weight version is held once per process.
    weights.set(name, sharedTensor({ dtype: 'float32', dims: [...dims], data }));
  });
  // Keep the spec's (insertion) order for iteration; draws depend only on the sorted index.
  return new Map([...shapes.keys()].map((name) => [name, weights.get(name)!]));
}
