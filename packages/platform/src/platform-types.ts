import type { OnnxArtifacts } from './component-types.js';
import type { ComputePool } from './worker-threads/compute-pool.js';

/** The devices flowfleet dispatches to (a closed set). */
export type Device = 'cpu' | 'cuda' | 'webgpu';

/** Every Device, in no particular order. */
export const DEVICES: readonly Device[] = Object.freeze(['cpu', 'cuda', 'webgpu']);

/** True when `value` names a Device. */
export function isDevice(value: string): value is Device {
  return (DEVICES as readonly string[]).includes(value);
}

/**
 * What this process runs on: immutable, honest facts. `arch` is the x86-64 level
 * (`x86-64-v4`/`v3`/`v2`/`generic`) or `aarch64` for the cpu device, `sm<major><minor>` for cuda,
 * and for webgpu what the adapter says: `software` for an emulated adapter (lavapipe,
 * SwiftShader), else `<vendor>[-<architecture>]` (`nvidia-hopper`).
 */
export interface PlatformFacts {
  readonly device: Device;
  readonly arch: string;
  /**
   * The flags behind the verdict (CPU flags, `compute_cap:9.0`, the adapter's own words
   * `adapter.vendor:…`/`adapter.device:…`/`adapter.fallback`, `override:…`).
   */
  readonly features: readonly string[];
  /**
   * The host CPU's arch, used when the device chain falls back to `cpu`. Equal to `arch` on a
   * cpu platform; when absent on injected facts the host CPU is detected.
   */
  readonly cpuArch?: string;
}

/**
 * The solver kernel op ids (DESIGN.md §2), by role: the one place they are spelled. Backends
 * register kernels under them and a card's loop resolves them; model-level ops are the card's own.
 */
export const SOLVER_OP = Object.freeze({
  /** Euler (ODE) step, `flowMatchStep`. */
  euler: 'flow_match_step',
  /** FlowGRPO SDE step with its log-prob, `flowSdeStep`. */
  sde: 'flow_sde_step',
  /** Classifier-free guidance, `cfgCombine`. */
  cfg: 'cfg_combine',
} as const);

/** Every solver kernel op id. */
export const SOLVER_OPS = Object.freeze([SOLVER_OP.euler, SOLVER_OP.sde, SOLVER_OP.cfg] as const);

/** One solver kernel op id. */
export type SolverOp = (typeof SOLVER_OPS)[number];

/**
 * What a model card says about one of its components: enough for a backend builder to build it
 * (`onnx`: its ONNX graph builder) and a TS reference `factory`, the last rung of the ladder.
 */
export interface ComponentSpec<TInstance = unknown, TComponent = unknown> {
  readonly id: string;
  readonly kind: string;
  readonly variant?: string;
  readonly factory: (
    spec: ComponentSpec<TInstance, TComponent>,
    instance: TInstance,
    context?: ComponentBuildContext,
  ) => TComponent | Promise<TComponent>;
  /** How ONNX Runtime backends build it; absent: they refuse it (BACK_ORT_NO_ONNX_ARTIFACT). */
  readonly onnx?: OnnxArtifacts;
}

/**
 * What `buildComponent` hands every builder and card factory besides the spec: the platform's
 * compute thread pool, when its owner gave it one (`createPlatform({pool})`).
 */
export interface ComponentBuildContext {
  readonly pool: ComputePool | undefined;
}
