/**
 * The compute thread: one of `ComputePool`'s worker threads. It holds the weight sets uploaded to
 * it (views of the main thread's SharedArrayBuffers where the tensors were shared) and the handlers loaded into it (each backend's code: ONNX Runtime sessions, the TS
 * reference forward), answers requests one at a time in arrival order (so a call sent after an
 * upload or a load always sees it), and moves reply buffers back instead of copying them.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '../component-types.js';
import {
  COMPUTE_HANDLER_EXPORT,
  TransferReply,
  type ComputeHandler,
  type ComputeHandlerFactory,
  type ComputeThreadContext,
} from './compute-handler.js';
import type {
  ComputeFailure,
  ComputeRequest,
  ComputeThreadData,
  ComputeThreadStats,
} from './compute-protocol.js';
import type { WorkerSlotMessage } from './worker-slot.js';

type Request = ComputeRequest & { readonly id: number };

function handlerError(message: string, details: Record<string, unknown>, cause?: unknown) {
  return new FlowfleetError('PLAT_COMPUTE_HANDLER_FAILED', message, { details, cause });
}

function failureOf(error: unknown, where: string): ComputeFailure {
  if (isFlowfleetError(error)) {
    return { code: error.code, message: error.message, details: error.details, where };
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { message, where };
}

function serve(port: MessagePort, { threadIndex }: ComputeThreadData): void {
  const weightSets = new Map<string, ReadonlyMap<string, TensorData>>();
  const handlers = new Map<string, ComputeHandler>();
  const counters = {
    calls: 0,
    busyMs: 0,
    weightUploads: 0,
    weightBytesShared: 0,
    weightBytesCopied: 0,
    outputBuffersTransferred: 0,
    outputBytesTransferred: 0,
  };
  const context: ComputeThreadContext = {
    threadIndex,
    weights(weightsId) {
      const tensors = weightSets.get(weightsId);
      if (tensors === undefined) {
        throw new FlowfleetError(
          'PLAT_COMPUTE_UNKNOWN_WEIGHTS',
          `no weight set '${weightsId}' in compute thread ${threadIndex}`,
          { details: { weightsId, threadIndex } },
        );
      }
      return tensors;
    },
  };

  const post = (message: WorkerSlotMessage<ComputeFailure>, transfer: ArrayBuffer[] = []) =>
    port.postMessage(message, transfer);

  async function load(request: Extract<Request, { op: 'load' }>): Promise<void> {
    if (handlers.has(request.handler)) return;
    let factory: unknown;
    try {
      factory = ((await import(request.url)) as Record<string, unknown>)[COMPUTE_HANDLER_EXPORT];
    } catch (cause) {
      throw handlerError(
        `compute handler '${request.handler}' could not be imported: ${String(cause)}`,
        { handler: request.handler, url: request.url },
        cause,
      );
    }
    if (typeof factory !== 'function') {
      throw handlerError(
        `compute handler module ${request.url} has no ${COMPUTE_HANDLER_EXPORT} export`,
        { handler: request.handler, url: request.url },
      );
    }
    const handler = await (factory as ComputeHandlerFactory)(context, request.options);
    handlers.set(request.handler, handler);
  }

  async function call(request: Extract<Request, { op: 'call' }>): Promise<unknown> {
    const handler = handlers.get(request.handler);
    if (handler === undefined) {
      throw handlerError(`compute handler '${request.handler}' is not loaded in this thread`, {
        handler: request.handler,
        threadIndex,
      });
    }
    const started = performance.now();
    try {
      return await handler.handle(request.method, request.payload);
    } finally {
      counters.calls += 1;
      counters.busyMs += performance.now() - started;
    }
  }

  function stats(): ComputeThreadStats {
    const perHandler: Record<string, Readonly<Record<string, number>>> = {};
    for (const [id, handler] of handlers) perHandler[id] = handler.stats?.() ?? {};
    return { threadIndex, ...counters, weightSetsLive: weightSets.size, handlers: perHandler };
  }

  async function handle(request: Request): Promise<unknown> {
    switch (request.op) {
      case 'load':
        return load(request);
      case 'call':
        return call(request);
      case 'uploadWeights':
        weightSets.set(request.weightsId, request.tensors);
        counters.weightUploads += 1;
        for (const { data } of request.tensors.values()) {
          if (data.buffer instanceof SharedArrayBuffer)
            counters.weightBytesShared += data.byteLength;
          else counters.weightBytesCopied += data.byteLength;
        }
        return undefined;
      case 'releaseWeights':
        weightSets.delete(request.weightsId);
        return undefined;
      case 'stats':
        return stats();
      case 'exitForTesting':
        return process.exit(request.exitCode);
    }
  }

  function reply(id: number, result: unknown): void {
    if (!(result instanceof TransferReply)) {
      post({ type: 'reply', id, ok: true, value: result });
      return;
    }
    const buffers = [...result.transfer];
    const bytes = buffers.reduce((n, buffer) => n + buffer.byteLength, 0);
    post({ type: 'reply', id, ok: true, value: result.value }, buffers);
    // A transferred buffer is detached here; anything else would mean it was copied.
    if (buffers.every((buffer) => buffer.byteLength === 0)) {
      counters.outputBuffersTransferred += buffers.length;
      counters.outputBytesTransferred += bytes;
    }
  }

  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: Request) => {
    // Fault injection acts on arrival, not in turn: the calls queued behind it are "in flight".
    if (request.op === 'exitForTesting') process.exit(request.exitCode);
    queue = queue.then(async () => {
      try {
        reply(request.id, await handle(request));
      } catch (error) {
        const where = request.op === 'call' ? `${request.handler}.${request.method}` : request.op;
        post({ type: 'reply', id: request.id, ok: false, failure: failureOf(error, where) });
      }
    });
  });
  post({ type: 'ready' });
}

if (parentPort === null) throw new Error('compute-thread must run in a worker thread');
serve(parentPort, workerData as ComputeThreadData);
