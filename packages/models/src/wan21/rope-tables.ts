import type { Wan21Config } from './wan21-config.js';
import { headDim } from './wan21-config.js';

/** The latent token grid (f, h, w) = (F/pt, H/ph, W/pw). */
export interface TokenGrid {
  readonly f: number;
  readonly h: number;
  readonly w: number;
}

/** RoPE cos/sin tables, each [N, d/2] row-major with N = f·h·w. */
export interface RopeTables {
  readonly cos: Float32Array;
  readonly sin: Float32Array;
}

/** Rotary pairs per axis (F, H, W) for head dim d, as Wan splits them: cH = cW = ⌊c/3⌋. */
export function ropeAxisPairs(config: Wan21Config): [number, number, number] {
  const c = headDim(config) / 2;
  const cH = Math.floor(c / 3);
  return [c - 2 * cH, cH, cH];
}

/**
 * The 3D RoPE tables of Wan2.1 for one grid: token n = (fi·h + hi)·w + wi gets the angles
 * [fi·θ_F, hi·θ_H, wi·θ_W] with θ_k = 10000^(−k/cA) per axis group; computed in float64.
 */
export function ropeTables(config: Wan21Config, grid: TokenGrid): RopeTables {
  const half = headDim(config) / 2;
  const [cF, cH, cW] = ropeAxisPairs(config);
  const axisTheta = (pairs: number): Float64Array => {
    const theta = new Float64Array(pairs);
    for (let k = 0; k < pairs; k++) theta[k] = Math.pow(10000, -k / pairs);
    return theta;
  };
  const thetaF = axisTheta(cF);
  const thetaH = axisTheta(cH);
  const thetaW = axisTheta(cW);
  const n = grid.f * grid.h * grid.w;
  const cos = new Float32Array(n * half);
  const sin = new Float32Array(n * half);
  const angles = new Float64Array(half);
  let row = 0;
  for (let fi = 0; fi < grid.f; fi++) {
    for (let hi = 0; hi < grid.h; hi++) {
      for (let wi = 0; wi < grid.w; wi++) {
        for (let k = 0; k < cF; k++) angles[k] = fi * thetaF[k]!;
        for (let k = 0; k < cH; k++) angles[cF + k] = hi * thetaH[k]!;
        for (let k = 0; k < cW; k++) angles[cF + cH + k] = wi * thetaW[k]!;
        const base = row * half;
        for (let m = 0; m < half; m++) {
          cos[base + m] = Math.cos(angles[m]!);
          sin[base + m] = Math.sin(angles[m]!);
        }
        row++;
      }
    }
  }
  return { cos, sin };
}
