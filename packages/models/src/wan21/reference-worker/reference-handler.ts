/**
 * The TS reference handler of the compute pool, loaded into each compute thread: it keeps
 * per-component workspaces and captured (pinned) workspaces, runs forwards with
 * `runReferenceForward` — the very function the in-thread component runs, so results are
 * bit-identical — on weight sets resident in the thread, and returns outputs with their buffers
 * moved.
 */
import {
  tensorsReply,
  type ComputeHandlerFactory,
  type ComputeThreadContext,
  type TensorData,
} from '@flowfleet/platform';
import { runReferenceForward, type ReferenceKind } from '../components/reference-forward.js';
import type { DitWorkspaceSlot } from '../reference/dit-forward.js';
import { DitWorkspace, ditWorkspaceShape } from '../reference/dit-workspace.js';
import type { Wan21Config } from '../wan21-config.js';
import type {
  CapturePayload,
  ForwardPayload,
  ReferenceCaptureInfo,
  ReferenceHandlerStats,
} from './reference-protocol.js';

/** A forward pinned to one weight set and one set of dims, with a workspace of its own. */
interface Capture {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly tensors: ReadonlyMap<string, TensorData>;
  readonly slot: DitWorkspaceSlot;
}

class ReferenceThread {
  readonly #workspaces = new Map<string, DitWorkspaceSlot>();
  readonly #captures = new Map<string, Capture>();
  readonly #counters = { forwards: 0, capturedForwards: 0, forwardMs: 0 };

  constructor(private readonly context: ComputeThreadContext) {}

  forward(request: ForwardPayload) {
    let slot = this.#workspaces.get(request.workspaceKey);
    if (slot === undefined) this.#workspaces.set(request.workspaceKey, (slot = {}));
    const tensors = this.context.weights(request.weightsId);
    const started = performance.now();
    const outputs = runReferenceForward(
      request.kind,
      request.config,
      request.inputs,
      tensors,
      slot,
    );
    this.#counters.forwardMs += performance.now() - started;
    this.#counters.forwards += 1;
    return tensorsReply(outputs);
  }

  capture(request: CapturePayload): ReferenceCaptureInfo {
    const slot: DitWorkspaceSlot = {};
    if (request.kind === 'dit') {
      const latent = request.inputDims['latent'] ?? [];
      const contextLen = request.inputDims['context']?.[1] ?? 0;
      slot.workspace = new DitWorkspace(
        request.config,
        ditWorkspaceShape(request.config, latent, contextLen),
      );
    }
    this.#captures.set(request.captureId, {
      kind: request.kind,
      config: request.config,
      tensors: this.context.weights(request.weightsId),
      slot,
    });
    return { bytesHeld: slot.workspace?.byteLength ?? 0 };
  }

  runCaptured(captureId: string, inputs: Readonly<Record<string, TensorData>>) {
    const pinned = this.#captures.get(captureId);
    if (pinned === undefined) {
      // The caller materialises a capture before it runs it; a miss is a defect.
      throw new Error(`no captured forward '${captureId}' in thread ${this.context.threadIndex}`);
    }
    const { kind, config, tensors, slot } = pinned;
    const started = performance.now();
    const outputs = runReferenceForward(kind, config, inputs, tensors, slot);
    this.#counters.forwardMs += performance.now() - started;
    this.#counters.capturedForwards += 1;
    return tensorsReply(outputs);
  }

  releaseCapture(captureId: string): void {
    this.#captures.delete(captureId);
  }

  releaseWorkspace(workspaceKey: string): void {
    this.#workspaces.delete(workspaceKey);
  }

  stats(): ReferenceHandlerStats {
    return {
      ...this.#counters,
      capturesLive: this.#captures.size,
      workspacesLive: this.#workspaces.size,
    };
  }
}

/** The pool loads this in each thread (`ReferenceCompute.attach`). */
export const createComputeHandler: ComputeHandlerFactory = (context) => {
  const thread = new ReferenceThread(context);
  return {
    handle(method, payload) {
      const p = payload as Record<string, unknown>;
      switch (method) {
        case 'forward':
          return thread.forward(payload as ForwardPayload);
        case 'capture':
          return thread.capture(payload as CapturePayload);
        case 'runCaptured':
          return thread.runCaptured(
            p['captureId'] as string,
            p['inputs'] as Readonly<Record<string, TensorData>>,
          );
        case 'releaseCapture':
          return thread.releaseCapture(p['captureId'] as string);
        case 'releaseWorkspace':
          return thread.releaseWorkspace(p['workspaceKey'] as string);
        default:
          throw new Error(`the reference handler has no method '${method}'`);
      }
    },
    stats: () => ({ ...thread.stats() }),
  };
};
