/** A latent's dims [B, C, F, H, W]. */
export type LatentDims = readonly [number, number, number, number, number];

/** Order of the values inside one patch token. */
export type PatchOrder = 'channel-first' | 'channel-last';

/**
 * Gathers non-overlapping patches of a latent [B, C, F, H, W] into tokens [B, N, C·pt·ph·pw] with
 * n = (fi·h + hi)·w + wi. `channel-first` orders a token's values (c, i, j, k) — the Conv3d weight
 * order of patch_embedding; `channel-last` orders them (i, j, k, c) — Wan's unpatchify order.
 */
export function patchify(
  latent: Float32Array,
  dims: LatentDims,
  patch: readonly [number, number, number],
  order: PatchOrder = 'channel-first',
  out?: Float32Array,
): Float32Array {
  const [B, C, F, H, W] = dims;
  const [pt, ph, pw] = patch;
  const f = F / pt;
  const h = H / ph;
  const w = W / pw;
  const volume = pt * ph * pw;
  const p = C * volume;
  const tokens = out ?? new Float32Array(B * f * h * w * p);
  for (let b = 0; b < B; b++) {
    for (let fi = 0; fi < f; fi++) {
      for (let hi = 0; hi < h; hi++) {
        for (let wi = 0; wi < w; wi++) {
          const base = (((b * f + fi) * h + hi) * w + wi) * p;
          for (let c = 0; c < C; c++) {
            const channel = (b * C + c) * F;
            for (let i = 0; i < pt; i++) {
              for (let j = 0; j < ph; j++) {
                const src = ((channel + fi * pt + i) * H + hi * ph + j) * W + wi * pw;
                for (let k = 0; k < pw; k++) {
                  const inner = (i * ph + j) * pw + k;
                  const dst = order === 'channel-first' ? c * volume + inner : inner * C + c;
                  tokens[base + dst] = latent[src + k]!;
                }
              }
            }
          }
        }
      }
    }
  }
  return tokens;
}

/**
 * Inverse of `patchify(…, 'channel-last')`: tokens [B, N, (pt, ph, pw, C)] → latent [B, C, F, H, W]
 * (Wan's unpatchify, C fastest within a token).
 */
export function unpatchify(
  tokens: Float32Array,
  dims: LatentDims,
  patch: readonly [number, number, number],
  out?: Float32Array,
): Float32Array {
  const [B, C, F, H, W] = dims;
  const [pt, ph, pw] = patch;
  const f = F / pt;
  const h = H / ph;
  const w = W / pw;
  const p = C * pt * ph * pw;
  const latent = out ?? new Float32Array(B * C * F * H * W);
  for (let b = 0; b < B; b++) {
    for (let fi = 0; fi < f; fi++) {
      for (let hi = 0; hi < h; hi++) {
        for (let wi = 0; wi < w; wi++) {
          const base = (((b * f + fi) * h + hi) * w + wi) * p;
          for (let i = 0; i < pt; i++) {
            for (let j = 0; j < ph; j++) {
              for (let k = 0; k < pw; k++) {
                const inner = ((i * ph + j) * pw + k) * C;
                for (let c = 0; c < C; c++) {
                  const dst = (((b * C + c) * F + fi * pt + i) * H + hi * ph + j) * W + wi * pw + k;
                  latent[dst] = tokens[base + inner + c]!;
                }
              }
            }
          }
        }
      }
    }
  }
  return latent;
}
