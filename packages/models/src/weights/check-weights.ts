import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';

/** A tensor whose dims or dtype differ from what the config expects. */
export interface WrongShapeTensor {
  readonly name: string;
  /** The checkpoint key it came under, when that is not `name`. */
  readonly source?: string;
  readonly expected: readonly number[];
  readonly actual: readonly number[];
  readonly dtype: string;
}

/** What `checkWeightsAgainstConfig` found wrong (all lists empty means the set matches). */
export interface WeightsMismatch {
  readonly missing: string[];
  readonly unexpected: string[];
  readonly wrongShape: WrongShapeTensor[];
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Compares a weight set with the expected shapes (float32 only) and lists every difference. */
export function diffWeights(
  tensors: ReadonlyMap<string, TensorData>,
  shapes: ReadonlyMap<string, readonly number[]>,
): WeightsMismatch {
  const missing: string[] = [];
  const wrongShape: WrongShapeTensor[] = [];
  for (const [name, expected] of shapes) {
    const tensor = tensors.get(name);
    if (tensor === undefined) missing.push(name);
    else if (tensor.dtype !== 'float32' || !sameDims(tensor.dims, expected)) {
      wrongShape.push({ name, expected, actual: tensor.dims, dtype: tensor.dtype });
    }
  }
  const unexpected = [...tensors.keys()].filter((name) => !shapes.has(name));
  return { missing, unexpected, wrongShape };
}

/**
 * Checks that `tensors` holds exactly the expected float32 tensors with the expected dims.
 * @throws MODEL_WEIGHTS_MISMATCH with `details: {missing, unexpected, wrongShape}`.
 */
export function checkWeightsAgainstConfig(
  tensors: ReadonlyMap<string, TensorData>,
  shapes: ReadonlyMap<string, readonly number[]>,
): void {
  const diff = diffWeights(tensors, shapes);
  if (diff.missing.length + diff.unexpected.length + diff.wrongShape.length === 0) return;
  throw weightsMismatch(diff);
}

/**
 * The MODEL_WEIGHTS_MISMATCH error listing every difference (the message names the first five of
 * each kind, `details` all of them).
 */
export function weightsMismatch(diff: WeightsMismatch): FlowfleetError {
  const parts = [
    diff.missing.length > 0 ? `missing: ${diff.missing.slice(0, 5).join(', ')}` : '',
    diff.unexpected.length > 0 ? `unexpected: ${diff.unexpected.slice(0, 5).join(', ')}` : '',
    diff.wrongShape.length > 0
      ? `wrong shape: ${diff.wrongShape
          .slice(0, 5)
          .map((t) => t.name)
          .join(', ')}`
      : '',
  ].filter((part) => part !== '');
  return new FlowfleetError(
    'MODEL_WEIGHTS_MISMATCH',
    `weights do not match the config (${parts.join('; ')})`,
    {
      details: { ...diff },
    },
  );
}
