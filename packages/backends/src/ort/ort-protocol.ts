import type { TensorData } from '@flowfleet/platform';
import type { OrtProvider, OrtSessionSettings } from './session-options.js';

/** The handler id the ONNX Runtime code is loaded under in the compute pool. */
export const ORT_HANDLER_ID = 'ort';

/** `createSession`: build a session from model bytes under `sessionId` (replacing one there). */
export interface CreateSessionPayload {
  readonly sessionId: string;
  readonly model: Uint8Array;
  readonly settings: OrtSessionSettings;
}

/** `run`: one forward; a weight set resident in the thread supplies the inputs the graph takes. */
export interface RunPayload {
  readonly sessionId: string;
  readonly inputs: Readonly<Record<string, TensorData>>;
  readonly weightsId?: string;
}

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

/** The ONNX Runtime handler's counters in one thread. */
export interface OrtHandlerStats {
  readonly sessionsCreated: number;
  readonly sessionsLive: number;
  readonly runs: number;
  /**
   * Bytes of shared weight tensors this thread copied to private memory for ONNX Runtime, because
   * its binding refused a SharedArrayBuffer here (see `ort-handler.ts`); 0 where it reads them.
   */
  readonly weightBytesPrivateCopies: number;
}

/** One compute thread's counters as `OrtSessions.stats()` reports them. */
export interface OrtThreadStats extends OrtHandlerStats {
  readonly threadIndex: number;
  /** Weight sets uploaded to the thread (by any handler; shared tensors are not copied). */
  readonly weightUploads: number;
  /** Uploaded weight bytes shared with the main thread, and copied to the thread. */
  readonly weightBytesShared: number;
  readonly weightBytesCopied: number;
  readonly weightSetsLive: number;
  /** Reply buffers moved to the caller (by any handler), checked detached after posting. */
  readonly outputBuffersTransferred: number;
  readonly outputBytesTransferred: number;
}
