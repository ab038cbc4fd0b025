import type { TensorData } from '@flowfleet/platform';
import type { OrtProvider, OrtSessionSettings } from './session-options.js';

/** What the pool passes to each worker at spawn. */
export interface OrtWorkerData {
  readonly workerIndex: number;
}

/** A request from the pool to one worker; every request carries a call id for its reply. */
export type OrtWorkerRequest =
  | {
      readonly op: 'createSession';
      readonly id: number;
      readonly sessionId: string;
      readonly model: Uint8Array;
      readonly settings: OrtSessionSettings;
    }
  | { readonly op: 'releaseSession'; readonly id: number; readonly sessionId: string }
  | {
      readonly op: 'uploadWeights';
      readonly id: number;
      readonly weightsId: string;
      readonly tensors: ReadonlyMap<string, TensorData>;
    }
  | { readonly op: 'releaseWeights'; readonly id: number; readonly weightsId: string }
  | {
      readonly op: 'run';
      readonly id: number;
      readonly sessionId: string;
      readonly inputs: Readonly<Record<string, TensorData>>;
      readonly weightsId?: string;
    }
  | { readonly op: 'probe'; readonly id: number; readonly provider: OrtProvider }
  | { readonly op: 'stats'; readonly id: number }
  | { readonly op: 'exitForTesting'; readonly id: number; readonly exitCode: number };

/** The request ops. */
export type OrtWorkerOp = OrtWorkerRequest['op'];

/** Why a worker call failed, as plain data (errors do not keep their class across threads). */
export interface OrtWorkerFailure {
  /** Which kind of failure, so the pool can pick the error code. */
  readonly kind: 'session' | 'run' | 'unknownSession' | 'unknownWeights' | 'dtype' | 'load';
  readonly message: string;
}

/** A message from a worker to the pool. */
export type OrtWorkerMessage =
  | { readonly type: 'ready'; readonly ortVersion: string }
  | { readonly type: 'startFailed'; readonly message: string }
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | {
      readonly type: 'reply';
      readonly id: number;
      readonly ok: false;
      readonly failure: OrtWorkerFailure;
    };

/** The outcome of probing one execution provider. */
export interface ProviderProbe {
  readonly provider: OrtProvider;
  readonly available: boolean;
  /** Why not (the runtime's own message), or what was checked when available. */
  readonly reason: string;
  /** Whether the npm package ships this provider's library (`listSupportedBackends()`). */
  readonly bundled: boolean;
  readonly probeMs: number;
}

/** Counters one worker keeps; `pool.stats()` returns one per worker. */
export interface OrtWorkerStats {
  readonly workerIndex: number;
  readonly sessionsCreated: number;
  readonly sessionsLive: number;
  readonly weightUploads: number;
  readonly weightSetsLive: number;
  readonly runs: number;
  /** Output buffers handed to the pool by transfer (checked: detached after posting). */
  readonly outputBuffersTransferred: number;
  readonly outputBytesTransferred: number;
}
