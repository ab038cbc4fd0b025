import type { TensorData } from '../component-types.js';

/** What the pool passes to each compute thread at spawn. */
export interface ComputeThreadData {
  readonly threadIndex: number;
}

/** A request from the pool to one thread, as the pool writes it (the slot adds the call id). */
export type ComputeRequest =
  | {
      readonly op: 'load';
      readonly handler: string;
      /** The handler module's URL (`.ts` under sources, `.js` compiled). */
      readonly url: string;
      readonly options: unknown;
    }
  | {
      readonly op: 'call';
      readonly handler: string;
      readonly method: string;
      readonly payload: unknown;
    }
  | {
      readonly op: 'uploadWeights';
      readonly weightsId: string;
      readonly tensors: ReadonlyMap<string, TensorData>;
    }
  | { readonly op: 'releaseWeights'; readonly weightsId: string }
  | { readonly op: 'stats' }
  | { readonly op: 'exitForTesting'; readonly exitCode: number };

/** The request ops. */
export type ComputeOp = ComputeRequest['op'];

/**
 * Why a thread call failed, as plain data (errors lose their class across threads): the
 * FlowfleetError's code and details when it was one, else only the message and stack (a defect).
 */
export interface ComputeFailure {
  readonly code?: string;
  readonly message: string;
  readonly details?: unknown;
  /** The handler and method of a `call`, for the defect report. */
  readonly where: string;
}

/** Counters one thread keeps; `ComputePool.stats()` returns one per live thread. */
export interface ComputeThreadStats {
  readonly threadIndex: number;
  /** Handler calls answered (successes and failures). */
  readonly calls: number;
  /** Time spent inside handler calls, ms. */
  readonly busyMs: number;
  readonly weightUploads: number;
  /**
   * Bytes of uploaded weight tensors that arrived in SharedArrayBuffers (the main thread's
   * memory, not a copy) and that arrived as copies (ordinary buffers, structured-cloned).
   */
  readonly weightBytesShared: number;
  readonly weightBytesCopied: number;
  readonly weightSetsLive: number;
  /** Reply buffers moved to the pool (checked: detached after posting, so not copied). */
  readonly outputBuffersTransferred: number;
  readonly outputBytesTransferred: number;
  /** Each loaded handler's own counters, by handler id. */
  readonly handlers: Readonly<Record<string, Readonly<Record<string, number>>>>;
}
