import { invalidArgument, requireIntegerIn } from './argument-checks.js';

// The Philox4x32 constants again, as module-local literals: V8 folds these into the inlined
// rounds, while imported bindings cost a load per use (~60 % slower here, measured).
const PHILOX_M0 = 0xd2511f53;
const PHILOX_M1 = 0xcd9e8d57;
const PHILOX_W0 = 0x9e3779b9;
const PHILOX_W1 = 0xbb67ae85;
const PHILOX_ROUNDS = 10;
const TWO_POW_32 = 4294967296;
const TWO_POW_MINUS_32 = 1 / TWO_POW_32;
const TWO_PI = 2 * Math.PI;
const CHUNK_BLOCKS = 256;
const UINT32_MAX = 0xffffffff;

/** Largest `n` gaussianNoise accepts. */
export const MAX_NOISE_LENGTH = UINT32_MAX;

/**
 * Standard normal noise of NoiseSpec v1 (DESIGN.md §4): Philox4x32-10 with key
 * `[seed mod 2^32, floor(seed / 2^32)]` and counter `[j mod 2^32, floor(j / 2^32), stream, 0]` for
 * block j; Box–Muller on the word pairs (w0, w1) and (w2, w3) in float64 with
 * `u1 = (a + 1)·2^-32`, `u2 = b·2^-32`; each value rounded to float32. Element i depends only on
 * (seed, stream, i), so a shorter draw is a prefix of a longer one.
 *
 * Stream 0 is a rollout's initial latent; stream 1 + i is the SDE noise of step i.
 *
 * @param out optional destination of length `n` (no allocation on the hot path).
 * @throws NUM_INVALID_ARGUMENT when seed is not an integer in [0, 2^53), stream not a uint32,
 *   n not an integer in [0, 2^32), or `out` has a length other than n.
 */
export function gaussianNoise(
  seed: number,
  stream: number,
  n: number,
  out?: Float32Array,
): Float32Array {
  requireIntegerIn('seed', seed, 0, Number.MAX_SAFE_INTEGER);
  requireIntegerIn('stream', stream, 0, UINT32_MAX);
  requireIntegerIn('n', n, 0, MAX_NOISE_LENGTH);
  if (out !== undefined && out.length !== n) {
    throw invalidArgument('out', `length ${out.length} does not match n = ${n}`, out.length);
  }
  const result = out ?? new Float32Array(n);
  const key0 = seed % TWO_POW_32;
  const key1 = Math.floor(seed / TWO_POW_32);
  const blocks = Math.ceil(n / 4);
  // Chunked so the kernel is called often and V8 optimises the whole function early, instead of
  // running a slower on-stack-replacement version for the first large draws.
  for (let first = 0; first < blocks; first += CHUNK_BLOCKS) {
    fillGaussian(result, key0, key1, stream, first, Math.min(blocks, first + CHUNK_BLOCKS), n);
  }
  return result;
}

/** The hot loop, kept free of property loads and checks so V8 optimises it as a whole. */
function fillGaussian(
  result: Float32Array,
  key0: number,
  key1: number,
  stream: number,
  firstBlock: number,
  endBlock: number,
  n: number,
): void {
  const fullBlocks = Math.floor(n / 4);
  for (let j = firstBlock; j < endBlock; j++) {
    // Philox4x32-10, inlined (a call per block costs ~40 %); same rounds as philox4x32x10.
    let c0 = j % TWO_POW_32;
    let c1 = Math.floor(j * TWO_POW_MINUS_32);
    let c2 = stream;
    let c3 = 0;
    let k0 = key0;
    let k1 = key1;
    for (let round = 0; round < PHILOX_ROUNDS; round++) {
      const lo0 = Math.imul(c0, PHILOX_M0) >>> 0;
      const hi0 = Math.round((c0 * PHILOX_M0 - lo0) * TWO_POW_MINUS_32);
      const lo1 = Math.imul(c2, PHILOX_M1) >>> 0;
      const hi1 = Math.round((c2 * PHILOX_M1 - lo1) * TWO_POW_MINUS_32);
      c0 = (hi1 ^ c1 ^ k0) >>> 0;
      c1 = lo1;
      c2 = (hi0 ^ c3 ^ k1) >>> 0;
      c3 = lo0;
      k0 = (k0 + PHILOX_W0) >>> 0;
      k1 = (k1 + PHILOX_W1) >>> 0;
    }
    const r0 = Math.sqrt(-2 * Math.log((c0 + 1) * TWO_POW_MINUS_32));
    const theta0 = TWO_PI * (c1 * TWO_POW_MINUS_32);
    const r1 = Math.sqrt(-2 * Math.log((c2 + 1) * TWO_POW_MINUS_32));
    const theta1 = TWO_PI * (c3 * TWO_POW_MINUS_32);
    const i = 4 * j;
    // Float32Array stores round to nearest even: exactly Math.fround.
    if (j < fullBlocks) {
      result[i] = r0 * Math.cos(theta0);
      result[i + 1] = r0 * Math.sin(theta0);
      result[i + 2] = r1 * Math.cos(theta1);
      result[i + 3] = r1 * Math.sin(theta1);
    } else {
      const rest = n - i;
      result[i] = r0 * Math.cos(theta0);
      if (rest > 1) result[i + 1] = r0 * Math.sin(theta0);
      if (rest > 2) result[i + 2] = r1 * Math.cos(theta1);
    }
  }
}
