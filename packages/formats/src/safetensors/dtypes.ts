/**
 * The safetensors dtypes this codec reads and writes (the ones the ecosystem writes for weights
 * and results), with their item sizes in bytes. F16 and BF16 stay raw 16-bit patterns
 * (`Uint16Array`); `half-float.ts` converts them. BOOL is one byte per value, 0 or 1.
 */
export const SAFETENSORS_ITEM_BYTES = Object.freeze({
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
} as const);

/** A dtype name of the safetensors format, as it appears in a header. */
export type SafetensorsDtype = keyof typeof SAFETENSORS_ITEM_BYTES;

/** Every supported dtype, in the order of the table above. */
export const SAFETENSORS_DTYPES: readonly SafetensorsDtype[] = Object.freeze(
  Object.keys(SAFETENSORS_ITEM_BYTES) as SafetensorsDtype[],
);

/** The typed array that holds each dtype's values. */
export interface SafetensorsArrays {
  readonly F64: Float64Array;
  readonly F32: Float32Array;
  /** IEEE 754 binary16 bit patterns. */
  readonly F16: Uint16Array;
  /** bfloat16 bit patterns (the top 16 bits of a float32). */
  readonly BF16: Uint16Array;
  readonly I64: BigInt64Array;
  readonly I32: Int32Array;
  readonly I16: Int16Array;
  readonly I8: Int8Array;
  readonly U8: Uint8Array;
  /** One byte per value: 0 (false) or 1 (true). */
  readonly BOOL: Uint8Array;
}

/** One tensor: its dtype, its shape (row-major) and its values. */
export type SafetensorsTensor<D extends SafetensorsDtype = SafetensorsDtype> = {
  readonly [K in D]: {
    readonly dtype: K;
    readonly shape: readonly number[];
    readonly data: SafetensorsArrays[K];
  };
}[D];

type TypedArrayConstructor = new (
  buffer: ArrayBuffer,
  byteOffset: number,
  length: number,
) => SafetensorsArrays[SafetensorsDtype];

/** The constructor of each dtype's typed array. */
export const SAFETENSORS_ARRAY_OF: Readonly<Record<SafetensorsDtype, TypedArrayConstructor>> =
  Object.freeze({
    F64: Float64Array,
    F32: Float32Array,
    F16: Uint16Array,
    BF16: Uint16Array,
    I64: BigInt64Array,
    I32: Int32Array,
    I16: Int16Array,
    I8: Int8Array,
    U8: Uint8Array,
    BOOL: Uint8Array,
  });

/** Whether `value` names a supported dtype. */
export function isSafetensorsDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(SAFETENSORS_ITEM_BYTES, value);
}

/** Element count of a shape (1 for a scalar `[]`). */
export function elementCount(shape: readonly number[]): number {
  let count = 1;
  for (const d of shape) count *= d;
  return count;
}
