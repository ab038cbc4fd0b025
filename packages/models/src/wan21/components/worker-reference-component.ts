import { randomUUID } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import type {
  CapturedForward,
  ComponentForward,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import type { ComputePool } from '@flowfleet/platform';
import { ReferenceCompute } from '../reference-worker/reference-compute.js';
import type { Wan21Config } from '../wan21-config.js';
import { checkCaptureDims, checkReferenceInputs, type ReferenceKind } from './reference-forward.js';
import { CPU_REFERENCE_SOURCE } from '../../components/reference-source.js';

type InputDims = Readonly<Record<string, readonly number[]>>;

function sameDims(a: readonly number[], b: readonly number[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * A TS reference component whose forwards run in the platform's compute pool (DESIGN.md §3):
 * `run` uploads the weight set once per id and thread and reuses this component's workspace
 * there; `capture` pins a workspace for fixed dims and the weights in a thread (the TS backend's
 * captured graph). Inputs are checked here first, so a bad call never crosses the thread.
 */
export class WorkerReferenceComponent implements ComponentForward {
  readonly source = CPU_REFERENCE_SOURCE;
  readonly #workspaceKey = `reference-component-${randomUUID()}`;
  readonly #captured = new Set<CapturedForward>();
  readonly #uploaded = new Set<string>();
  #compute: Promise<ReferenceCompute> | undefined;
  #disposing: Promise<void> | undefined;

  constructor(
    readonly kind: ReferenceKind,
    private readonly config: Wan21Config,
    private readonly pool: ComputePool,
  ) {}

  /**
   * One forward in a worker thread; the caller's input arrays are copied, never detached.
   * @throws MODEL_INPUT_INVALID, MODEL_WEIGHTS_MISMATCH, PLAT_COMPUTE_THREAD_EXITED,
   *   PLAT_COMPUTE_POOL_CLOSED, MODEL_COMPONENT_DISPOSED.
   */
  async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
    this.#assertLive();
    checkReferenceInputs(this.kind, this.config, inputs);
    const pool = await this.#attached();
    this.#uploaded.add(weights.id);
    return pool.forward({
      kind: this.kind,
      config: this.config,
      weights,
      workspaceKey: this.#workspaceKey,
      inputs,
    });
  }

  /**
   * A forward pinned to `weights` and `inputDims`, with its own workspace in the worker;
   * `bytesHeld` is that workspace's size.
   * @throws MODEL_INPUT_INVALID for dims that do not fit the config; as `run` otherwise.
   */
  async capture(weights: WeightSet, inputDims: InputDims): Promise<CapturedForward> {
    this.#assertLive();
    checkCaptureDims(this.kind, this.config, inputDims);
    const pool = await this.#attached();
    const dims: InputDims = Object.fromEntries(
      Object.entries(inputDims).map(([name, d]) => [name, [...d]]),
    );
    const { id, bytesHeld } = await pool.capture({
      kind: this.kind,
      config: this.config,
      weights,
      inputDims: dims,
    });
    const captured = this.#captured;
    let released: Promise<void> | undefined;
    const forward: CapturedForward = {
      bytesHeld,
      run: async (inputs) => {
        if (released !== undefined) throw disposedError(`captured forward ${id}`);
        for (const [name, tensor] of Object.entries(inputs)) {
          if (!sameDims(tensor.dims, dims[name])) {
            throw new FlowfleetError(
              'MODEL_INPUT_INVALID',
              `input ${name} [${tensor.dims.join(', ')}] differs from the captured dims`,
              { details: { input: name, dims: [...tensor.dims], captured: dims[name] ?? null } },
            );
          }
        }
        checkReferenceInputs(this.kind, this.config, inputs);
        return pool.runCaptured(id, inputs);
      },
      dispose: () => {
        released ??= (async () => {
          captured.delete(forward);
          await pool.releaseCapture(id);
        })();
        return released;
      },
    };
    captured.add(forward);
    return forward;
  }

  /** Drops the weight set from the workers (a no-op when this component never ran). */
  async releaseWeights(weightsId: string): Promise<void> {
    this.#uploaded.delete(weightsId);
    const compute = await this.#compute?.catch(() => undefined);
    await compute?.releaseWeights(weightsId);
  }

  /** Disposes its captured forwards, its workspace and the weights it uploaded; idempotent. */
  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      const compute = await this.#compute?.catch(() => undefined);
      const steps = [...this.#captured].map((forward) => forward.dispose());
      if (compute !== undefined) {
        steps.push(compute.releaseWorkspace(this.#workspaceKey));
        steps.push(...[...this.#uploaded].map((id) => compute.releaseWeights(id)));
      }
      this.#uploaded.clear();
      const failed = (await Promise.allSettled(steps)).find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    })();
    return this.#disposing;
  }

  /** The reference handler on the pool, loaded on first use (a failed load is tried again). */
  #attached(): Promise<ReferenceCompute> {
    const attached = (this.#compute ??= ReferenceCompute.attach(this.pool));
    attached.catch(() => {
      if (this.#compute === attached) this.#compute = undefined;
    });
    return attached;
  }

  #assertLive(): void {
    if (this.#disposing !== undefined) throw disposedError(`${this.kind} component`);
  }
}

function disposedError(what: string): FlowfleetError {
  return new FlowfleetError('MODEL_COMPONENT_DISPOSED', `the TS reference ${what} was disposed`, {
    details: { what },
  });
}
