/**
 * The TS reference worker thread: holds uploaded weight sets, per-component workspaces and
 * captured (pinned) workspaces, runs forwards with `runReferenceForward` — the very function the
 * in-thread component runs, so results are bit-identical — and posts outputs back as transferred
 * ArrayBuffers. Requests are handled one at a time in arrival order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { runReferenceForward } from '../components/reference-forward.js';
import type { ReferenceKind } from '../components/reference-forward.js';
import type { DitWorkspaceSlot } from '../reference/dit-forward.js';
import { DitWorkspace, ditWorkspaceShape } from '../reference/dit-workspace.js';
import type { Wan21Config } from '../wan21-config.js';
import type {
  ReferenceCaptureInfo,
  ReferenceWorkerData,
  ReferenceWorkerFailure,
  ReferenceWorkerMessage,
  ReferenceWorkerRequest,
  ReferenceWorkerStats,
} from './reference-worker-protocol.js';

/** A forward pinned to one weight set and one set of dims, with a workspace of its own. */
interface Capture {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly tensors: ReadonlyMap<string, TensorData>;
  readonly slot: DitWorkspaceSlot;
}

const port = parentPort;
if (port === null) throw new Error('reference-worker must run in a worker thread');
const { workerIndex } = workerData as ReferenceWorkerData;

const weightSets = new Map<string, ReadonlyMap<string, TensorData>>();
const workspaces = new Map<string, DitWorkspaceSlot>();
const captures = new Map<string, Capture>();
const counters = {
  weightUploads: 0,
  forwards: 0,
  capturedForwards: 0,
  forwardMs: 0,
  outputBuffersTransferred: 0,
  outputBytesTransferred: 0,
};

function post(message: ReferenceWorkerMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function weightsOf(weightsId: string): ReadonlyMap<string, TensorData> {
  const tensors = weightSets.get(weightsId);
  // The pool uploads before it forwards; a miss is a pool defect, not a caller error.
  if (tensors === undefined)
    throw new Error(`no weight set '${weightsId}' in worker ${workerIndex}`);
  return tensors;
}

function capture(
  request: Extract<ReferenceWorkerRequest, { op: 'capture' }>,
): ReferenceCaptureInfo {
  const slot: DitWorkspaceSlot = {};
  if (request.kind === 'dit') {
    const latent = request.inputDims['latent'] ?? [];
    const contextLen = request.inputDims['context']?.[1] ?? 0;
    slot.workspace = new DitWorkspace(
      request.config,
      ditWorkspaceShape(request.config, latent, contextLen),
    );
  }
  captures.set(request.captureId, {
    kind: request.kind,
    config: request.config,
    tensors: weightsOf(request.weightsId),
    slot,
  });
  return { bytesHeld: slot.workspace?.byteLength ?? 0 };
}

/** Posts the outputs with their buffers transferred (each output owns its buffer outright). */
function reply(id: number, outputs: Record<string, TensorData>): void {
  const transfer = new Set<ArrayBuffer>();
  const value: Record<string, TensorData> = {};
  for (const [name, tensor] of Object.entries(outputs)) {
    const { data } = tensor;
    const owned = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const sent = owned ? tensor : { ...tensor, data: data.slice() };
    value[name] = sent;
    transfer.add(sent.data.buffer as ArrayBuffer);
  }
  const bytes = [...transfer].reduce((n, buffer) => n + buffer.byteLength, 0);
  post({ type: 'reply', id, ok: true, value }, [...transfer]);
  // A transferred buffer is detached here; anything else would mean it was copied.
  if ([...transfer].every((buffer) => buffer.byteLength === 0)) {
    counters.outputBuffersTransferred += transfer.size;
    counters.outputBytesTransferred += bytes;
  }
}

function stats(): ReferenceWorkerStats {
  return {
    workerIndex,
    ...counters,
    weightSetsLive: weightSets.size,
    capturesLive: captures.size,
    workspacesLive: workspaces.size,
  };
}

/** Handles one request; returns the reply value, or `undefined` after replying itself. */
function handle(request: ReferenceWorkerRequest): unknown {
  switch (request.op) {
    case 'uploadWeights':
      weightSets.set(request.weightsId, request.tensors);
      counters.weightUploads += 1;
      return undefined;
    case 'releaseWeights':
      weightSets.delete(request.weightsId);
      return undefined;
    case 'forward': {
      let slot = workspaces.get(request.workspaceKey);
      if (slot === undefined) workspaces.set(request.workspaceKey, (slot = {}));
      const tensors = weightsOf(request.weightsId);
      const started = performance.now();
      const outputs = runReferenceForward(
        request.kind,
        request.config,
        request.inputs,
        tensors,
        slot,
      );
      counters.forwardMs += performance.now() - started;
      counters.forwards += 1;
      reply(request.id, outputs);
      return undefined;
    }
    case 'capture':
      return capture(request);
    case 'runCaptured': {
      const pinned = captures.get(request.captureId);
      if (pinned === undefined) {
        throw new Error(`no captured forward '${request.captureId}' in worker ${workerIndex}`);
      }
      const { kind, config, tensors, slot } = pinned;
      const started = performance.now();
      const outputs = runReferenceForward(kind, config, request.inputs, tensors, slot);
      counters.forwardMs += performance.now() - started;
      counters.capturedForwards += 1;
      reply(request.id, outputs);
      return undefined;
    }
    case 'releaseCapture':
      captures.delete(request.captureId);
      return undefined;
    case 'releaseWorkspace':
      workspaces.delete(request.workspaceKey);
      return undefined;
    case 'stats':
      return stats();
    case 'exitForTesting':
      return process.exit(request.exitCode);
  }
}

function failureOf(error: unknown): ReferenceWorkerFailure {
  if (isFlowfleetError(error)) {
    return { code: error.code, message: error.message, details: error.details };
  }
  return { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

const REPLIES_ITSELF = new Set<ReferenceWorkerRequest['op']>(['forward', 'runCaptured']);

port.on('message', (request: ReferenceWorkerRequest) => {
  try {
    const value = handle(request);
    if (!REPLIES_ITSELF.has(request.op)) post({ type: 'reply', id: request.id, ok: true, value });
  } catch (error) {
    post({ type: 'reply', id: request.id, ok: false, failure: failureOf(error) });
  }
});

post({ type: 'ready' });
