import type { CapturedForward, ComponentForward, InputDims, WeightSet } from '@flowfleet/platform';
import type { RuntimeTensor, RuntimeTensorMap } from './runtime-tensor.js';

/** The shape signature of a step: part of the graph key, so a new shape means a new graph. */
export interface ShapeSig {
  /** What the step computes, e.g. `denoise`, `text_encode`. */
  readonly kind: string;
  /** Named dims of the step's inputs. */
  readonly dims: Readonly<Record<string, readonly number[]>>;
  /** The storage dtype of the step's main tensors (`float32`, `float16`, …). */
  readonly dtype: string;
  /** Anything else that fixes the graph's shape (free-form, stable). */
  readonly extra?: string;
}

/** Op-structure discriminators (CFG branch set, expert, scheduler precision …): part of the key. */
export type GraphKey = Readonly<Record<string, string | number | boolean>>;

/** What a step is, for interceptors, observers and timings. */
export interface StepInfo {
  readonly loopId: string;
  /** `encode`, `denoise`, … (loop-defined). */
  readonly kind: string;
  /** Index of the step within its kind (the denoise step i uses σ_i → σ_{i+1}). */
  readonly index: number;
}

/** A cached velocity that replaces the step's forward (the solver part still runs). */
export interface StepOverride {
  readonly velocity: Float32Array;
  /** The interceptor that supplied it. */
  readonly source: string;
}

/** What a step returns: at least the tensors observers and interceptors may read. */
export interface StepResult {
  readonly tensors: Readonly<Record<string, Float32Array | Float64Array>>;
}

/** The kernels a step resolves by op id (the platform's KernelTable satisfies it). */
export interface KernelLookup {
  get<F>(op: string, variant?: string): F;
}

/**
 * What a step sees of its ModelInstance: components, the weights this rollout pinned and the
 * kernels. Narrow on purpose, so loops and tests can pass a plain object.
 */
export interface StepInstance {
  readonly kernels: KernelLookup;
  component(id: string): ComponentForward;
  /** The weights of `id` at the version this rollout pinned. */
  weights(id: string): WeightSet;
  /** Pinned version per component id. */
  readonly versions: Readonly<Record<string, number>>;
}

/** The static workspace a captured graph owns; a graph function reads and writes only through it. */
export interface GraphWorkspace {
  /** The bound (static) buffer of a graph input; holds the current step's values. */
  input(name: string): RuntimeTensor;
  /** A named float32 scratch view carved from the arena; the same name gives the same bytes. */
  scratchF32(name: string, length: number): Float32Array;
  /** A named float64 scratch view carved from the arena. */
  scratchF64(name: string, length: number): Float64Array;
  /** The forward of a component captured for this graph (its specialised form). */
  forward(componentId: string): CapturedForward;
  /** A kernel resolved when the graph was captured. */
  kernel<F>(op: string): F;
  readonly workspaceBytes: number;
}

/**
 * One step, described: the runtime decides how it runs (eager, capture, replay, override).
 * `run` is the eager form; `graphFn` + `graphInputs` the capturable one. Neither may keep
 * per-request state outside the loop state.
 */
export interface WorkPlan<R extends StepResult = StepResult> {
  readonly done?: false;
  readonly step: StepInfo;
  /** Components whose weights the step uses; the graph key names their pinned versions. */
  readonly components: readonly string[];
  readonly shapeSig: ShapeSig;
  readonly capturable: boolean;
  readonly graphKey: GraphKey;
  /** Scratch bytes the graph function needs from its static workspace. */
  readonly workspaceBytes: number;
  /** Eager form: computes the step now (the override, when given, replaces the forward). */
  run(instance: StepInstance, override?: StepOverride): Promise<R>;
  /** Capturable form: reads its inputs from `workspace`, never from a closure over the request. */
  readonly graphFn?: (instance: StepInstance, workspace: GraphWorkspace) => Promise<R>;
  /** This step's values of the graph inputs; bound into the workspace on every replay. */
  readonly graphInputs?: RuntimeTensorMap;
  /** Components to capture for the graph, with their input dims. */
  readonly graphComponents?: Readonly<Record<string, InputDims>>;
  /** Kernel ops the graph resolves up front. */
  readonly graphKernels?: readonly string[];
}

/** The loop has no more steps. */
export interface LoopDone {
  readonly done: true;
}

/** The singleton Done marker. */
export const DONE: LoopDone = Object.freeze({ done: true });

/** True when `next()` said the loop is finished. */
export function isDone<R extends StepResult>(item: WorkPlan<R> | LoopDone): item is LoopDone {
  return item.done === true;
}

/**
 * A driven loop (DESIGN.md §3): `init` makes the per-request state, `next` describes the next
 * step without computing, `advance` folds a step's result into the state, `finalize` builds the
 * output. All per-request state lives in `S`.
 */
export interface DrivenLoop<Req, S, R extends StepResult, Out> {
  readonly loopId: string;
  init(request: Req, instance: StepInstance): S;
  next(state: S): WorkPlan<R> | LoopDone;
  advance(state: S, result: R): void;
  finalize(state: S): Out;
}
