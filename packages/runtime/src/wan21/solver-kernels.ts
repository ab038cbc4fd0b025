/** The solver kernel op ids a denoise step resolves through the KernelTable. */
export const KERNEL_OPS = Object.freeze({
  euler: 'flow_match_step',
  sde: 'flow_sde_step',
  cfg: 'cfg_combine',
} as const);

/** `cfg_combine`: v = v_u + w·(v_c − v_u), written into `out` when given. */
export type CfgCombineKernel = (
  uncond: Float32Array,
  cond: Float32Array,
  scale: number,
  out?: Float32Array,
) => Float32Array;

/** `flow_match_step`: x' = x + (σ' − σ)·v, written into `out` when given. */
export type FlowMatchStepKernel = (
  x: Float32Array,
  v: Float32Array,
  sigma: number,
  sigmaNext: number,
  out?: Float32Array,
) => Float32Array;

/** `flow_sde_step`: one FlowGRPO step (DESIGN.md §4) with its log-prob. */
export type FlowSdeStepKernel = (args: {
  readonly x: Float32Array;
  readonly v: Float32Array;
  readonly sigma: number;
  readonly sigmaNext: number;
  readonly stdDevT: number;
  readonly noise?: Float32Array;
  readonly prevSample?: Float32Array;
  readonly out?: { readonly sample?: Float32Array; readonly mean?: Float32Array };
}) => { readonly sample: Float32Array; readonly mean: Float32Array; readonly logProb: number };
