/**
 * The ONNX Runtime worker thread: holds sessions and uploaded weight sets, runs forwards, and
 * posts outputs back as transferred ArrayBuffers. `session.run` blocks the thread it runs on
 * (DESIGN.md §8), which is why it runs here and not on the main thread. Requests are handled one
 * at a time in arrival order, so a run sent after a createSession always sees that session.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { loadOrt, type Ort } from './load-ort.js';
import { PROBE_MODEL_BYTES, PROBE_MODEL_IO } from './probe-model.js';
import { ortSessionOptions, type OrtProvider } from './session-options.js';
import type {
  OrtWorkerData,
  OrtWorkerFailure,
  OrtWorkerMessage,
  OrtWorkerRequest,
  OrtWorkerStats,
  ProviderProbe,
} from './worker-protocol.js';

class WorkerCallError extends Error {
  constructor(
    readonly kind: OrtWorkerFailure['kind'],
    message: string,
  ) {
    super(message);
  }
}

const port = parentPort;
if (port === null) throw new Error('ort-worker must run in a worker thread');
const { workerIndex } = workerData as OrtWorkerData;

const sessions = new Map<string, InferenceSession>();
const weightSets = new Map<string, ReadonlyMap<string, Tensor>>();
const counters = {
  sessionsCreated: 0,
  weightUploads: 0,
  runs: 0,
  outputBuffersTransferred: 0,
  outputBytesTransferred: 0,
};

function post(message: OrtWorkerMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toOrtTensor(ort: Ort, name: string, tensor: TensorData): Tensor {
  if (tensor.dtype !== 'float32' && tensor.dtype !== 'int32' && tensor.dtype !== 'int64') {
    throw new WorkerCallError(
      'dtype',
      `tensor '${name}' has unsupported dtype ${String(tensor.dtype)}`,
    );
  }
  return new ort.Tensor(tensor.dtype, tensor.data, tensor.dims);
}

/** An output as TensorData whose buffer it owns outright, so the buffer can be transferred. */
function toTensorData(name: string, tensor: Tensor): TensorData {
  const { type, data, dims } = tensor;
  if (
    !(type === 'float32' && data instanceof Float32Array) &&
    !(type === 'int32' && data instanceof Int32Array) &&
    !(type === 'int64' && data instanceof BigInt64Array)
  ) {
    throw new WorkerCallError('dtype', `output '${name}' has unsupported dtype ${type}`);
  }
  const owned = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  return { dtype: type, dims: [...dims], data: owned ? data : data.slice() };
}

async function createSession(model: Uint8Array, settings: Parameters<typeof ortSessionOptions>[0]) {
  const ort = await loadOrt();
  try {
    return await ort.InferenceSession.create(model, ortSessionOptions(settings));
  } catch (error) {
    throw new WorkerCallError('session', messageOf(error));
  }
}

async function probe(provider: OrtProvider): Promise<ProviderProbe> {
  const ort = await loadOrt();
  const started = performance.now();
  const bundled = ort.listSupportedBackends().some((b) => b.name === provider && b.bundled);
  const done = (available: boolean, reason: string): ProviderProbe => ({
    provider,
    available,
    reason: reason.trim(),
    bundled,
    probeMs: performance.now() - started,
  });
  let session: InferenceSession;
  try {
    session = await ort.InferenceSession.create(
      PROBE_MODEL_BYTES,
      ortSessionOptions({ provider, intraOpThreads: 1 }),
    );
  } catch (error) {
    return done(false, messageOf(error));
  }
  try {
    const x = new ort.Tensor('float32', new Float32Array([42]), [1]);
    const out = await session.run({ [PROBE_MODEL_IO.input]: x });
    const y = out[PROBE_MODEL_IO.output]?.data;
    return y instanceof Float32Array && y[0] === 42
      ? done(true, `created a ${provider} session and ran the probe model`)
      : done(false, `${provider} session ran the probe model but returned a wrong value`);
  } catch (error) {
    return done(false, messageOf(error));
  } finally {
    await session.release();
  }
}

async function run(request: Extract<OrtWorkerRequest, { op: 'run' }>): Promise<void> {
  const ort = await loadOrt();
  const session = sessions.get(request.sessionId);
  if (session === undefined) {
    throw new WorkerCallError(
      'unknownSession',
      `no session '${request.sessionId}' in worker ${workerIndex}`,
    );
  }
  const feeds: Record<string, Tensor> = {};
  if (request.weightsId !== undefined) {
    const weights = weightSets.get(request.weightsId);
    if (weights === undefined) {
      throw new WorkerCallError(
        'unknownWeights',
        `no weight set '${request.weightsId}' in worker ${workerIndex}`,
      );
    }
    // Only the weights this graph takes: a weight set may carry tensors another graph uses.
    for (const name of session.inputNames) {
      const tensor = weights.get(name);
      if (tensor !== undefined) feeds[name] = tensor;
    }
  }
  for (const [name, tensor] of Object.entries(request.inputs))
    feeds[name] = toOrtTensor(ort, name, tensor);
  let outputs: InferenceSession.OnnxValueMapType;
  try {
    outputs = await session.run(feeds);
  } catch (error) {
    throw new WorkerCallError('run', messageOf(error));
  }
  const value: Record<string, TensorData> = {};
  const transfer = new Set<ArrayBuffer>();
  for (const [name, output] of Object.entries(outputs)) {
    const tensor = toTensorData(name, output as Tensor);
    value[name] = tensor;
    transfer.add(tensor.data.buffer as ArrayBuffer);
  }
  counters.runs += 1;
  post({ type: 'reply', id: request.id, ok: true, value }, [...transfer]);
  for (const buffer of transfer) {
    // A transferred buffer is detached here; anything else would mean it was copied.
    if (buffer.byteLength === 0) counters.outputBuffersTransferred += 1;
  }
  for (const tensor of Object.values(value)) {
    if (tensor.data.buffer.byteLength === 0) counters.outputBytesTransferred += tensorBytes(tensor);
  }
}

function tensorBytes(tensor: TensorData): number {
  const elements = tensor.dims.reduce((n, d) => n * d, 1);
  return elements * (tensor.dtype === 'int64' ? 8 : 4);
}

function stats(): OrtWorkerStats {
  return { workerIndex, ...counters, sessionsLive: sessions.size, weightSetsLive: weightSets.size };
}

async function handle(request: OrtWorkerRequest): Promise<unknown> {
  switch (request.op) {
    case 'createSession': {
      const session = await createSession(request.model, request.settings);
      await sessions.get(request.sessionId)?.release();
      sessions.set(request.sessionId, session);
      counters.sessionsCreated += 1;
      return { inputNames: session.inputNames, outputNames: session.outputNames };
    }
    case 'releaseSession': {
      const session = sessions.get(request.sessionId);
      sessions.delete(request.sessionId);
      await session?.release();
      return undefined;
    }
    case 'uploadWeights': {
      const ort = await loadOrt();
      const tensors = new Map<string, Tensor>();
      for (const [name, tensor] of request.tensors)
        tensors.set(name, toOrtTensor(ort, name, tensor));
      weightSets.set(request.weightsId, tensors);
      counters.weightUploads += 1;
      return undefined;
    }
    case 'releaseWeights':
      weightSets.delete(request.weightsId);
      return undefined;
    case 'run':
      return run(request);
    case 'probe':
      return probe(request.provider);
    case 'stats':
      return stats();
    case 'exitForTesting':
      return process.exit(request.exitCode);
  }
}

let queue: Promise<void> = Promise.resolve();

port.on('message', (request: OrtWorkerRequest) => {
  // Fault injection acts on arrival, not in turn: the calls queued behind it are "in flight".
  if (request.op === 'exitForTesting') process.exit(request.exitCode);
  queue = queue.then(async () => {
    try {
      const value = await handle(request);
      // `run` posts its own reply (with a transfer list) and returns undefined.
      if (request.op !== 'run') post({ type: 'reply', id: request.id, ok: true, value });
    } catch (error) {
      const failure: OrtWorkerFailure =
        error instanceof WorkerCallError
          ? { kind: error.kind, message: error.message }
          : {
              kind: isFlowfleetError(error, 'BACK_ORT_LOAD_FAILED') ? 'load' : 'run',
              message: messageOf(error),
            };
      post({ type: 'reply', id: request.id, ok: false, failure });
    }
  });
});

// Load onnxruntime-node now so a broken install fails the pool's create(), not the first forward.
loadOrt().then(
  (ort) => post({ type: 'ready', ortVersion: ort.env.versions.node ?? 'unknown' }),
  (error: unknown) => post({ type: 'startFailed', message: messageOf(error) }),
);
