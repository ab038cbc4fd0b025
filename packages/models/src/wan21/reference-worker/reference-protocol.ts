import type { TensorData } from '@flowfleet/platform';
import type { ReferenceKind } from '../components/reference-forward.js';
import type { Wan21Config } from '../wan21-config.js';

/** The handler id the TS reference forward is loaded under in the compute pool. */
export const REFERENCE_HANDLER_ID = 'reference';

/** Input dims of one captured forward, by input name. */
export type ReferenceInputDims = Readonly<Record<string, readonly number[]>>;

/** `forward`: one eager forward with a resident weight set, reusing a component's workspace. */
export interface ForwardPayload {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weightsId: string;
  /** Whose workspace to reuse (one per component and thread). */
  readonly workspaceKey: string;
  readonly inputs: Readonly<Record<string, TensorData>>;
}

/** `capture`: pin a workspace for fixed dims and a weight set under `captureId`. */
export interface CapturePayload {
  readonly captureId: string;
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weightsId: string;
  readonly inputDims: ReferenceInputDims;
}

/** What a capture reports back. */
export interface ReferenceCaptureInfo {
  /** Bytes of the workspace pinned for the captured dims (0 for the text encoder). */
  readonly bytesHeld: number;
}

/** The reference handler's counters in one thread. */
export interface ReferenceHandlerStats {
  readonly forwards: number;
  readonly capturedForwards: number;
  /** Time spent inside forwards (eager and captured), ms. */
  readonly forwardMs: number;
  readonly capturesLive: number;
  readonly workspacesLive: number;
}

/** One compute thread's counters as `ReferenceCompute.stats()` reports them. */
export interface ReferenceThreadStats extends ReferenceHandlerStats {
  readonly threadIndex: number;
  /** Weight sets uploaded to the thread (by any handler: the pool keeps one copy per thread). */
  readonly weightUploads: number;
  readonly weightSetsLive: number;
  /** Reply buffers moved to the caller (by any handler), checked detached after posting. */
  readonly outputBuffersTransferred: number;
  readonly outputBytesTransferred: number;
}
