import type { GraphBuilder, Value } from '../../onnx/graph-builder.js';

/** Looks up a parameter (graph input or initializer) by its Wan name. */
export type VaeParams = (name: string) => Value;

/** The step's frame-0 flag and the cache plumbing every causal layer shares. */
export interface StepContext {
  /** bool [1]: this step decodes latent frame 0. */
  readonly first: Value;
  /** The cache input of a slot (by its name). */
  cache(slot: string): Value;
  /** Declares a slot's next cache. */
  setCache(slot: string, value: Value): void;
}

// Slice ends past any dim (ONNX clamps them).
const TO_END = Number.MAX_SAFE_INTEGER;

/** `x`'s size along `axis` as an int64 [1]. */
export function dimOf(g: GraphBuilder, x: Value, axis: number): Value {
  return g.node('Shape', [x], { start: axis, end: axis + 1 });
}

/**
 * A causal conv: the slot's cache (the last 2 frames of this conv's input at the previous step;
 * zeros at frame 0) in front of x, then the conv with symmetric spatial zero padding; the next
 * cache is the last 2 frames of that input.
 */
export function causalConv(
  g: GraphBuilder,
  p: VaeParams,
  ctx: StepContext,
  x: Value,
  prefix: string,
  kernel: readonly [number, number, number],
): Value {
  const cached = g.node('Where', [ctx.first, g.constFloat(0), ctx.cache(prefix)]);
  const full = g.concat([cached, x], 2);
  ctx.setCache(
    prefix,
    g.node('Slice', [full, g.constInt64([-2]), g.constInt64([TO_END]), g.constInt64([2])]),
  );
  const [, kh = 1, kw = 1] = kernel;
  const pads = [0, (kh - 1) / 2, (kw - 1) / 2, 0, (kh - 1) / 2, (kw - 1) / 2];
  return g.node('Conv', [full, p(`${prefix}.weight`), p(`${prefix}.bias`)], {
    kernel_shape: kernel,
    pads,
  });
}

/** A pointwise 3D conv (1×1×1); `unsqueeze` lifts a Conv2d weight [O, I, 1, 1] to 3D. */
export function pointwiseConv(
  g: GraphBuilder,
  p: VaeParams,
  x: Value,
  prefix: string,
  unsqueeze = false,
): Value {
  const weight = unsqueeze ? g.unsqueeze(p(`${prefix}.weight`), [2]) : p(`${prefix}.weight`);
  return g.node('Conv', [x, weight, p(`${prefix}.bias`)], { kernel_shape: [1, 1, 1] });
}

/** Wan's RMS_norm over channels: x / max(‖x‖₂, 1e-12) · √C · gamma (F.normalize's rule). */
export function rmsNorm(
  g: GraphBuilder,
  p: VaeParams,
  x: Value,
  prefix: string,
  dim: number,
  images = false,
): Value {
  const norm = g.node('ReduceL2', [x], { axes: [1], keepdims: 1 });
  const normalized = g.div(x, g.node('Max', [norm, g.constFloat(1e-12)]));
  // An image norm's gamma is [C, 1, 1]; here every tensor is [B, C, t, H, W].
  const gamma = images ? g.unsqueeze(p(`${prefix}.gamma`), [1]) : p(`${prefix}.gamma`);
  return g.mul(g.mul(normalized, g.constFloat(Math.sqrt(dim))), gamma);
}

export function silu(g: GraphBuilder, x: Value): Value {
  return g.mul(x, g.sigmoid(x));
}

/** Wan's ResidualBlock: causal convs after RMS norm + SiLU, plus x (or its 1×1×1 shortcut). */
export function residualBlock(
  g: GraphBuilder,
  p: VaeParams,
  ctx: StepContext,
  x: Value,
  wan: string,
  cin: number,
  cout: number,
): Value {
  let h = silu(g, rmsNorm(g, p, x, `${wan}.residual.0`, cin));
  h = causalConv(g, p, ctx, h, `${wan}.residual.2`, [3, 3, 3]);
  h = silu(g, rmsNorm(g, p, h, `${wan}.residual.3`, cout));
  h = causalConv(g, p, ctx, h, `${wan}.residual.6`, [3, 3, 3]);
  return g.add(h, cin === cout ? x : pointwiseConv(g, p, x, `${wan}.shortcut`));
}

/** Single-head self-attention over each frame's H·W positions, plus x. */
export function attentionBlock(
  g: GraphBuilder,
  p: VaeParams,
  x: Value,
  wan: string,
  dim: number,
): Value {
  const qkv = pointwiseConv(
    g,
    p,
    rmsNorm(g, p, x, `${wan}.norm`, dim, true),
    `${wan}.to_qkv`,
    true,
  );
  const [batch, frames, height, width] = [0, 2, 3, 4].map((axis) => dimOf(g, x, axis)) as [
    Value,
    Value,
    Value,
    Value,
  ];
  const positions = g.mul(height, width);
  // [B, 3C, t, H, W] → [B·t, H·W, 3C] → q, k, v [B·t, H·W, C]
  const tokens = g.reshape(
    g.transpose(qkv, [0, 2, 3, 4, 1]),
    g.concat([g.constInt64([-1]), positions, g.constInt64([3 * dim])], 0),
  );
  const [q, k, v] = g.split(tokens, 2, 3) as [Value, Value, Value];
  const scores = g.div(g.matMul(q, g.transpose(k, [0, 2, 1])), g.constFloat(Math.sqrt(dim)));
  const attended = g.matMul(g.softmax(scores, -1), v);
  const back = g.reshape(
    attended,
    g.concat([batch, frames, height, width, g.constInt64([dim])], 0),
  );
  return g.add(x, pointwiseConv(g, p, g.transpose(back, [0, 4, 1, 2, 3]), `${wan}.proj`, true));
}

/**
 * Wan's Resample (upsample2d/3d). Temporal: at frame 0 x passes through (the original skips its
 * `time_conv` on the first call and caches zeros); after, the causal `time_conv` (C → 2C, its
 * cache the last 2 frames of its input) gives each frame two, channels [0, C) first. Then a 2×
 * nearest upsample of H and W and a 3×3 conv C → C/2 on every frame.
 */
export function resample(
  g: GraphBuilder,
  p: VaeParams,
  ctx: StepContext,
  x: Value,
  wan: string,
  dim: number,
  temporal: boolean,
): Value {
  if (temporal) {
    const slot = `${wan}.time_conv`;
    const cached = g.node('Where', [ctx.first, g.constFloat(0), ctx.cache(slot)]);
    const full = g.concat([cached, x], 2);
    const last2 = g.node('Slice', [
      full,
      g.constInt64([-2]),
      g.constInt64([TO_END]),
      g.constInt64([2]),
    ]);
    ctx.setCache(slot, g.node('Where', [ctx.first, g.constFloat(0), last2]));
    const y = g.node('Conv', [full, p(`${slot}.weight`), p(`${slot}.bias`)], {
      kernel_shape: [3, 1, 1],
    });
    const [batch, frames, height, width] = [0, 2, 3, 4].map((axis) => dimOf(g, x, axis)) as [
      Value,
      Value,
      Value,
      Value,
    ];
    const split = g.reshape(y, g.concat([batch, g.constInt64([2, dim]), frames, height, width], 0));
    const doubled = g.mul(frames, g.constInt64([2]));
    const interleaved = g.reshape(
      g.transpose(split, [0, 2, 3, 1, 4, 5]),
      g.concat([batch, g.constInt64([dim]), doubled, height, width], 0),
    );
    // Frame 0 keeps x's frames and none of the time_conv's; every later frame the reverse.
    const zero = g.constInt64([0]);
    const keepX = g.node('Where', [ctx.first, frames, zero]);
    const keepY = g.node('Where', [ctx.first, zero, doubled]);
    const axis = g.constInt64([2]);
    x = g.concat(
      [g.node('Slice', [x, zero, keepX, axis]), g.node('Slice', [interleaved, zero, keepY, axis])],
      2,
    );
  }
  const scales = g.constFloat([1, 1, 1, 2, 2]);
  const upsampled = g.node('Resize', [x, '', scales], {
    mode: 'nearest',
    coordinate_transformation_mode: 'asymmetric',
    nearest_mode: 'floor',
  });
  const weight = g.unsqueeze(p(`${wan}.resample.1.weight`), [2]);
  return g.node('Conv', [upsampled, weight, p(`${wan}.resample.1.bias`)], {
    kernel_shape: [1, 3, 3],
    pads: [0, 1, 1, 0, 1, 1],
  });
}

/** Clip(x, lo, hi) with constant bounds (opset 11+: bounds are inputs). */
export function clip(g: GraphBuilder, x: Value, lo: number, hi: number): Value {
  return g.node('Clip', [x, g.constFloat(lo), g.constFloat(hi)]);
}
