import { randomUUID } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import {
  moduleWorkerUrl,
  packedTensors,
  type ComputePool,
  type ComputeThread,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import type { ReferenceKind } from '../components/reference-forward.js';
import type { Wan21Config } from '../wan21-config.js';
import {
  REFERENCE_HANDLER_ID,
  type ReferenceCaptureInfo,
  type ReferenceHandlerStats,
  type ReferenceInputDims,
  type ReferenceThreadStats,
} from './reference-protocol.js';

/** One eager forward: a component's kind, config and workspace key, the weights and the inputs. */
export interface ReferenceForwardRequest {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weights: WeightSet;
  /** Whose workspace the thread reuses between calls (one per component). */
  readonly workspaceKey: string;
  readonly inputs: TensorMap;
}

/** What a forward is captured at: kind, config, the pinned weights and fixed input dims. */
export interface ReferenceCaptureRequest {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weights: WeightSet;
  readonly inputDims: ReferenceInputDims;
}

interface CaptureEntry {
  readonly id: string;
  readonly request: ReferenceCaptureRequest;
  /** The thread holding its pinned workspace; replaced when that thread died. */
  home: ComputeThread;
}

const CAPTURE = 'reference-capture:';
const WORKSPACE = 'reference-workspace:';

/**
 * The TS reference forward on a compute pool, so a forward (~300 ms for a wan21-mini CFG pair)
 * never blocks the event loop (DESIGN.md §3). Weight sets are uploaded to a thread once per
 * `WeightSet.id` and stay resident until `releaseWeights`; inputs go over as compact copies whose
 * buffers are transferred (the caller keeps its arrays), outputs come back as transferred
 * buffers. A thread that dies is replaced by the pool; what it held is made again on use.
 */
export class ReferenceCompute {
  readonly #captures = new Map<string, CaptureEntry>();

  private constructor(readonly pool: ComputePool) {}

  /**
   * Loads the reference handler into every thread of `pool` (idempotent per pool).
   * @throws PLAT_COMPUTE_HANDLER_FAILED, PLAT_COMPUTE_POOL_CLOSED.
   */
  static async attach(pool: ComputePool): Promise<ReferenceCompute> {
    await pool.load({
      id: REFERENCE_HANDLER_ID,
      url: moduleWorkerUrl(import.meta.url, 'reference-handler'),
    });
    return new ReferenceCompute(pool);
  }

  /**
   * Runs one eager forward in the least loaded thread (preferring one that holds the weights) and
   * returns its outputs.
   * @throws MODEL_INPUT_INVALID, MODEL_WEIGHTS_MISMATCH (raised in the thread, same details),
   *   PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED.
   */
  async forward(request: ReferenceForwardRequest): Promise<Record<string, TensorData>> {
    const { pool } = this;
    const { weights } = request;
    const thread = pool.pick((t) => (pool.hasWeights(t, weights.id) ? 0 : 1));
    const packed = packedTensors(request.inputs);
    return pool.dispatch(thread, { weights }, () => {
      void thread.resident(`${WORKSPACE}${request.workspaceKey}`, async () => undefined);
      return thread.call(
        REFERENCE_HANDLER_ID,
        'forward',
        {
          kind: request.kind,
          config: request.config,
          weightsId: weights.id,
          workspaceKey: request.workspaceKey,
          inputs: packed.tensors,
        },
        packed.transfer,
      );
    });
  }

  /**
   * Pins a forward to one weight set and fixed dims: the thread allocates the workspace for those
   * dims once and keeps it (and the weights it read) until `releaseCapture`.
   * @throws PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED.
   */
  async capture(request: ReferenceCaptureRequest): Promise<{ id: string } & ReferenceCaptureInfo> {
    const id = `reference-capture-${randomUUID()}`;
    const entry: CaptureEntry = { id, request, home: this.pool.pick() };
    const info = await this.#materialise(entry);
    this.#captures.set(id, entry);
    return { id, ...info };
  }

  /**
   * Runs a captured forward on its thread (captured again on a live thread if its own died).
   * @throws MODEL_INPUT_INVALID, PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED;
   *   MODEL_COMPONENT_DISPOSED for a released capture.
   */
  async runCaptured(captureId: string, inputs: TensorMap): Promise<Record<string, TensorData>> {
    const entry = this.#captures.get(captureId);
    if (entry === undefined) throw releasedError(captureId);
    if (!this.pool.isCurrent(entry.home)) entry.home = this.pool.pick();
    const thread = entry.home;
    const packed = packedTensors(inputs);
    return this.pool.dispatch(thread, { prepare: () => this.#materialise(entry) }, () => {
      // Released while it was being made again: the thread no longer holds it.
      if (this.#captures.get(captureId) !== entry) return Promise.reject(releasedError(captureId));
      return thread.call(
        REFERENCE_HANDLER_ID,
        'runCaptured',
        { captureId, inputs: packed.tensors },
        packed.transfer,
      );
    });
  }

  /** Drops a captured forward's pinned workspace; unknown ids are ignored. */
  async releaseCapture(captureId: string): Promise<void> {
    if (!this.#captures.delete(captureId)) return;
    await this.pool.forget(`${CAPTURE}${captureId}`, (thread) =>
      thread.call(REFERENCE_HANDLER_ID, 'releaseCapture', { captureId }),
    );
  }

  /** Drops a component's eager workspace from every thread; unknown keys are ignored. */
  releaseWorkspace(workspaceKey: string): Promise<void> {
    return this.pool.forget(`${WORKSPACE}${workspaceKey}`, (thread) =>
      thread.call(REFERENCE_HANDLER_ID, 'releaseWorkspace', { workspaceKey }),
    );
  }

  /**
   * Drops a weight set from every thread (captures keep the tensors they pinned until released);
   * a later forward with that id uploads it again.
   */
  releaseWeights(weightsId: string): Promise<void> {
    return this.pool.releaseWeights(weightsId);
  }

  /** Each live thread's counters (the pool's and the reference handler's). */
  async stats(): Promise<ReferenceThreadStats[]> {
    return (await this.pool.stats()).map((thread) => {
      const own = (thread.handlers[REFERENCE_HANDLER_ID] ?? {}) as Partial<ReferenceHandlerStats>;
      return {
        threadIndex: thread.threadIndex,
        weightUploads: thread.weightUploads,
        weightSetsLive: thread.weightSetsLive,
        forwards: own.forwards ?? 0,
        capturedForwards: own.capturedForwards ?? 0,
        forwardMs: own.forwardMs ?? 0,
        capturesLive: own.capturesLive ?? 0,
        workspacesLive: own.workspacesLive ?? 0,
        outputBuffersTransferred: thread.outputBuffersTransferred,
        outputBytesTransferred: thread.outputBytesTransferred,
      };
    });
  }

  #materialise(entry: CaptureEntry): Promise<ReferenceCaptureInfo> {
    const thread = entry.home;
    const { kind, config, weights, inputDims } = entry.request;
    return thread.resident(`${CAPTURE}${entry.id}`, () =>
      this.pool.dispatch(thread, { weights }, () =>
        thread.call<ReferenceCaptureInfo>(REFERENCE_HANDLER_ID, 'capture', {
          captureId: entry.id,
          kind,
          config,
          weightsId: weights.id,
          inputDims,
        }),
      ),
    );
  }
}

function releasedError(captureId: string): FlowfleetError {
  return new FlowfleetError(
    'MODEL_COMPONENT_DISPOSED',
    `captured forward '${captureId}' was released`,
    { details: { captureId } },
  );
}
