import { FlowfleetError } from '@flowfleet/errors';

/** Details of a NUM_INVALID_ARGUMENT error: which argument, and what it was. */
export interface InvalidArgumentDetails {
  readonly argument: string;
  readonly value?: unknown;
}

/** Builds the coded error every numerics function throws for an argument outside its domain. */
export function invalidArgument(
  argument: string,
  message: string,
  value?: unknown,
): FlowfleetError<'NUM_INVALID_ARGUMENT', InvalidArgumentDetails> {
  return new FlowfleetError('NUM_INVALID_ARGUMENT', `${argument}: ${message}`, {
    details: value === undefined ? { argument } : { argument, value },
  });
}

/** Throws unless `value` is a finite number. */
export function requireFinite(argument: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalidArgument(argument, 'expected a finite number', value);
  }
}

/** Throws unless `value` is an integer in [min, max]. */
export function requireIntegerIn(argument: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(argument, `expected an integer in [${min}, ${max}]`, value);
  }
}

/** Throws unless `array` has exactly `length` elements. */
export function requireLength(
  argument: string,
  array: ArrayLike<number>,
  length: number,
  against: string,
): void {
  if (array.length !== length) {
    throw invalidArgument(
      argument,
      `length ${array.length} does not match ${against} (length ${length})`,
      array.length,
    );
  }
}

/** Returns `out` when given (after checking its length) or a fresh Float32Array of `length`. */
export function outputArray(out: Float32Array | undefined, length: number): Float32Array {
  if (out === undefined) return new Float32Array(length);
  if (out.length !== length) {
    throw invalidArgument('out', `length ${out.length} does not match the input length ${length}`);
  }
  return out;
}

/** Throws unless `value` is a sigma of a flow-matching schedule: a number in [0, 1]. */
export function requireSigma(argument: string, value: number): void {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw invalidArgument(argument, 'expected σ in [0, 1]', value);
  }
}
