import type { TensorData } from '@flowfleet/platform';
import type { ReferenceKind } from '../components/reference-forward.js';
import type { Wan21Config } from '../wan21-config.js';

/** What the pool passes to each reference worker at spawn. */
export interface ReferenceWorkerData {
  readonly workerIndex: number;
}

/** Input dims of one captured forward, by input name. */
export type ReferenceInputDims = Readonly<Record<string, readonly number[]>>;

/** A request from the pool to one worker; every request carries a call id for its reply. */
export type ReferenceWorkerRequest =
  | {
      readonly op: 'uploadWeights';
      readonly id: number;
      readonly weightsId: string;
      readonly tensors: ReadonlyMap<string, TensorData>;
    }
  | { readonly op: 'releaseWeights'; readonly id: number; readonly weightsId: string }
  | {
      readonly op: 'forward';
      readonly id: number;
      readonly kind: ReferenceKind;
      readonly config: Wan21Config;
      readonly weightsId: string;
      /** Whose workspace to reuse (one per component and worker). */
      readonly workspaceKey: string;
      readonly inputs: Readonly<Record<string, TensorData>>;
    }
  | {
      readonly op: 'capture';
      readonly id: number;
      readonly captureId: string;
      readonly kind: ReferenceKind;
      readonly config: Wan21Config;
      readonly weightsId: string;
      readonly inputDims: ReferenceInputDims;
    }
  | {
      readonly op: 'runCaptured';
      readonly id: number;
      readonly captureId: string;
      readonly inputs: Readonly<Record<string, TensorData>>;
    }
  | { readonly op: 'releaseCapture'; readonly id: number; readonly captureId: string }
  | { readonly op: 'releaseWorkspace'; readonly id: number; readonly workspaceKey: string }
  | { readonly op: 'stats'; readonly id: number }
  | { readonly op: 'exitForTesting'; readonly id: number; readonly exitCode: number };

/** The request ops. */
export type ReferenceWorkerOp = ReferenceWorkerRequest['op'];

/**
 * Why a worker call failed, as plain data (errors lose their class across threads): the
 * FlowfleetError code and details when it was one, else only the message (a defect).
 */
export interface ReferenceWorkerFailure {
  readonly code?: string;
  readonly message: string;
  readonly details?: unknown;
}

/** A message from a worker to the pool. */
export type ReferenceWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | {
      readonly type: 'reply';
      readonly id: number;
      readonly ok: false;
      readonly failure: ReferenceWorkerFailure;
    };

/** What a capture reports back. */
export interface ReferenceCaptureInfo {
  /** Bytes of the workspace pinned for the captured dims (0 for the text encoder). */
  readonly bytesHeld: number;
}

/** Counters one worker keeps; `pool.stats()` returns one per worker. */
export interface ReferenceWorkerStats {
  readonly workerIndex: number;
  readonly weightUploads: number;
  readonly weightSetsLive: number;
  readonly forwards: number;
  readonly capturedForwards: number;
  /** Time spent inside forwards (eager and captured), ms. */
  readonly forwardMs: number;
  readonly capturesLive: number;
  readonly workspacesLive: number;
  /** Output buffers handed to the pool by transfer (checked: detached after posting). */
  readonly outputBuffersTransferred: number;
  readonly outputBytesTransferred: number;
}
