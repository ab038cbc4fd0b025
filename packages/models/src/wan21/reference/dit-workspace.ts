import { ropeTables } from '../rope-tables.js';
import type { TokenGrid } from '../rope-tables.js';
import type { Wan21Config } from '../wan21-config.js';
import { headDim, patchValues } from '../wan21-config.js';
import { createAttentionScratch } from './attention.js';
import type { AttentionScratch } from './attention.js';

/** The sizes a DiT workspace is specialised to. */
export interface DitWorkspaceShape {
  readonly batch: number;
  readonly grid: TokenGrid;
  readonly contextLen: number;
}

/**
 * The workspace shape of a forward on a latent [B, C, F, H, W] with `contextLen` text tokens
 * (the token grid is the latent divided by the patch).
 */
export function ditWorkspaceShape(
  config: Wan21Config,
  latentDims: readonly number[],
  contextLen: number,
): DitWorkspaceShape {
  const [B = 0, , F = 0, H = 0, W = 0] = latentDims;
  const [pt, ph, pw] = config.patch;
  return { batch: B, grid: { f: F / pt, h: H / ph, w: W / pw }, contextLen };
}

/**
 * Preallocated buffers of one DiT forward shape (batch, grid, context length): reusing it across
 * calls means the forward allocates nothing but its output.
 */
export class DitWorkspace {
  readonly shape: DitWorkspaceShape;
  readonly tokens: number;
  readonly patches: Float32Array;
  readonly x: Float32Array;
  readonly y: Float32Array;
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  readonly attn: Float32Array;
  readonly hidden: Float32Array;
  readonly ctxHidden: Float32Array;
  readonly ctx: Float32Array;
  readonly ctxK: Float32Array;
  readonly ctxV: Float32Array;
  readonly sinusoid: Float32Array;
  readonly timeHidden: Float32Array;
  readonly timeEmbedding: Float32Array;
  readonly timeSilu: Float32Array;
  readonly timeProjection: Float32Array;
  readonly modulation: Float32Array;
  readonly headOut: Float32Array;
  readonly ropeCos: Float32Array;
  readonly ropeSin: Float32Array;
  readonly scratch: AttentionScratch;

  constructor(config: Wan21Config, shape: DitWorkspaceShape) {
    const { batch, grid, contextLen } = shape;
    const [pt, ph, pw] = config.patch;
    const D = config.dim;
    this.shape = shape;
    this.tokens = grid.f * grid.h * grid.w;
    const rows = batch * this.tokens;
    const ctxRows = batch * contextLen;
    this.patches = new Float32Array(rows * config.inChannels * pt * ph * pw);
    this.x = new Float32Array(rows * D);
    this.y = new Float32Array(rows * D);
    this.q = new Float32Array(rows * D);
    this.k = new Float32Array(rows * D);
    this.v = new Float32Array(rows * D);
    this.attn = new Float32Array(rows * D);
    this.hidden = new Float32Array(rows * config.ffnDim);
    this.ctxHidden = new Float32Array(ctxRows * D);
    this.ctx = new Float32Array(ctxRows * D);
    this.ctxK = new Float32Array(ctxRows * D);
    this.ctxV = new Float32Array(ctxRows * D);
    this.sinusoid = new Float32Array(batch * config.freqDim);
    this.timeHidden = new Float32Array(batch * D);
    this.timeEmbedding = new Float32Array(batch * D);
    this.timeSilu = new Float32Array(batch * D);
    this.timeProjection = new Float32Array(batch * 6 * D);
    this.modulation = new Float32Array(batch * 6 * D);
    this.headOut = new Float32Array(rows * patchValues(config));
    const rope = ropeTables(config, grid);
    this.ropeCos = rope.cos;
    this.ropeSin = rope.sin;
    this.scratch = createAttentionScratch(
      this.tokens,
      Math.max(this.tokens, contextLen),
      headDim(config),
    );
  }

  /** Bytes of every buffer this workspace holds (RoPE tables and attention scratch included). */
  get byteLength(): number {
    let bytes = 0;
    for (const value of [...Object.values(this), ...Object.values(this.scratch)]) {
      if (value instanceof Float32Array || value instanceof Float64Array) bytes += value.byteLength;
    }
    return bytes;
  }

  /** True when this workspace was built for exactly these sizes. */
  fits(shape: DitWorkspaceShape): boolean {
    const s = this.shape;
    return (
      s.batch === shape.batch &&
      s.contextLen === shape.contextLen &&
      s.grid.f === shape.grid.f &&
      s.grid.h === shape.grid.h &&
      s.grid.w === shape.grid.w
    );
  }
}
