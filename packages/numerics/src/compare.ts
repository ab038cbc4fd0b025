import { float32UlpDistance } from './float32-ulp.js';

/** The tolerances of DESIGN.md §4 that verifyVectors applies. */
export const NUMERICS_TOLERANCES = {
  /** normals, Euler, CFG, SDE sample and mean: float32 steps apart. */
  float32Ulp: 1,
  /** logProb and std: |a − b| ≤ tol·max(|a|, |b|). */
  relative: 1e-12,
  /** sigmas: |a − b| ≤ tol. */
  sigmasAbsolute: 1e-15,
} as const;

/** The outcome of comparing one field of a case. */
export interface FieldCheck {
  readonly ok: boolean;
  /** e.g. `out: max 0 ulp` or `out[5]: got 0.25 expected 0.2500001 (2 ulp > 1)`. */
  readonly detail: string;
}

/** Every element within `maxUlp` float32 steps; reports the worst element. */
export function checkFloat32Array(
  field: string,
  got: ArrayLike<number>,
  expected: readonly number[],
  maxUlp: number = NUMERICS_TOLERANCES.float32Ulp,
): FieldCheck {
  if (got.length !== expected.length) {
    return { ok: false, detail: `${field}: length ${got.length}, expected ${expected.length}` };
  }
  let worst = 0;
  let worstIndex = -1;
  for (let i = 0; i < expected.length; i++) {
    const distance = float32UlpDistance(got[i] as number, expected[i] as number);
    if (distance > worst) {
      worst = distance;
      worstIndex = i;
    }
  }
  if (worst <= maxUlp) return { ok: true, detail: `${field}: max ${worst} ulp` };
  const at = `${field}[${worstIndex}]`;
  const g = String(got[worstIndex] as number);
  const e = String(expected[worstIndex] as number);
  return { ok: false, detail: `${at}: got ${g} expected ${e} (${worst} ulp > ${maxUlp})` };
}

/** Exact equality of integer words (Philox). */
export function checkExact(
  field: string,
  got: ArrayLike<number>,
  expected: readonly number[],
): FieldCheck {
  for (let i = 0; i < expected.length; i++) {
    if (got[i] !== expected[i]) {
      const detail = `${field}[${i}]: got ${got[i]} expected ${expected[i]} (must be exact)`;
      return { ok: false, detail };
    }
  }
  return { ok: true, detail: `${field}: exact` };
}

/** |got − expected| ≤ tol·max(|got|, |expected|). */
export function checkRelative(
  field: string,
  got: number,
  expected: number,
  tolerance: number = NUMERICS_TOLERANCES.relative,
): FieldCheck {
  const scale = Math.max(Math.abs(got), Math.abs(expected));
  const error = got === expected ? 0 : Math.abs(got - expected) / scale;
  const shown = error.toExponential(1);
  if (error <= tolerance) return { ok: true, detail: `${field}: rel ${shown}` };
  return {
    ok: false,
    detail: `${field}: got ${String(got)} expected ${String(expected)} (rel ${shown} > ${tolerance})`,
  };
}

/** Every |got[i] − expected[i]| ≤ tol; reports the worst element. */
export function checkAbsoluteArray(
  field: string,
  got: ArrayLike<number>,
  expected: readonly number[],
  tolerance: number,
): FieldCheck {
  if (got.length !== expected.length) {
    return { ok: false, detail: `${field}: length ${got.length}, expected ${expected.length}` };
  }
  let worst = 0;
  let worstIndex = -1;
  for (let i = 0; i < expected.length; i++) {
    const error = Math.abs((got[i] as number) - (expected[i] as number));
    if (!(error <= worst)) {
      worst = error;
      worstIndex = i;
      if (Number.isNaN(error)) break;
    }
  }
  const shown = worst.toExponential(1);
  if (worst <= tolerance) return { ok: true, detail: `${field}: max abs ${shown}` };
  const g = String(got[worstIndex] as number);
  const e = String(expected[worstIndex] as number);
  return {
    ok: false,
    detail: `${field}[${worstIndex}]: got ${g} expected ${e} (abs ${shown} > ${tolerance})`,
  };
}
