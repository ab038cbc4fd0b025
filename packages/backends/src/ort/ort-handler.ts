/**
 * The ONNX Runtime handler of the compute pool, loaded into each compute thread: it holds the
 * thread's sessions, feeds resident weight sets (converted to ONNX Runtime tensors once per set)
 * and returns outputs with their buffers moved. `session.run` blocks the thread it runs on
 * (DESIGN.md §8), which is why it runs here and not on the main thread. Importing this module
 * loads nothing; its factory loads onnxruntime-node, so a broken install fails the pool's `load`.
 *
 * Shared weights: a weight set arrives as views of the main thread's SharedArrayBuffers. The
 * binding builds an input tensor over the typed array's memory without copying it, but it asks
 * Node-API for that memory with `napi_get_arraybuffer_info`, which refuses a SharedArrayBuffer
 * before nodejs/node#59071 (so on Node 20: "Invalid argument" from `run`). Each thread therefore
 * asks once (`#readsShared`, a run of the probe model on a shared tensor) and, where the binding
 * refuses, copies each shared weight tensor to private memory once per resident set — the copy
 * goes with the set when it is released. Where the binding reads shared memory, nothing is copied.
 */
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { FlowfleetError } from '@flowfleet/errors';
import {
  sharedFloat32Array,
  tensorsReply,
  type ComputeHandlerFactory,
  type ComputeThreadContext,
  type TensorData,
} from '@flowfleet/platform';
import { loadOrt, type Ort } from './load-ort.js';
import type {
  CreateSessionPayload,
  OrtHandlerStats,
  ProviderProbe,
  RunPayload,
} from './ort-protocol.js';
import { PROBE_MODEL_BYTES, PROBE_MODEL_IO } from './probe-model.js';
import { ortSessionOptions, type OrtProvider } from './session-options.js';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toOrtTensor(ort: Ort, name: string, tensor: TensorData): Tensor {
  if (tensor.dtype !== 'float32' && tensor.dtype !== 'int32' && tensor.dtype !== 'int64') {
    throw new FlowfleetError(
      'BACK_ORT_UNSUPPORTED_DTYPE',
      `tensor '${name}' has unsupported dtype ${String(tensor.dtype)}`,
      { details: { tensor: name, dtype: String(tensor.dtype) } },
    );
  }
  return new ort.Tensor(tensor.dtype, tensor.data, tensor.dims);
}

function toTensorData(name: string, tensor: Tensor): TensorData {
  const { type, data, dims } = tensor;
  if (
    !(type === 'float32' && data instanceof Float32Array) &&
    !(type === 'int32' && data instanceof Int32Array) &&
    !(type === 'int64' && data instanceof BigInt64Array)
  ) {
    throw new FlowfleetError('BACK_ORT_UNSUPPORTED_DTYPE', `output '${name}' is ${type}`, {
      details: { tensor: name, dtype: type },
    });
  }
  return { dtype: type, dims: [...dims], data };
}

/** The sessions and converted weights of one thread. */
class OrtThread {
  readonly #sessions = new Map<string, InferenceSession>();
  /** Per resident weight set (the pool's Map object): its tensors as ONNX Runtime tensors. */
  readonly #converted = new WeakMap<ReadonlyMap<string, TensorData>, Map<string, Tensor>>();
  readonly #counters = { sessionsCreated: 0, runs: 0, weightBytesPrivateCopies: 0 };
  #sharedProbe: Promise<boolean> | undefined;

  constructor(
    private readonly ort: Ort,
    private readonly context: ComputeThreadContext,
  ) {}

  async createSession({ sessionId, model, settings }: CreateSessionPayload) {
    let session: InferenceSession;
    try {
      session = await this.ort.InferenceSession.create(model, ortSessionOptions(settings));
    } catch (error) {
      throw new FlowfleetError(
        'BACK_ORT_SESSION_FAILED',
        `ONNX Runtime createSession failed: ${messageOf(error)}`,
        { details: { threadIndex: this.context.threadIndex } },
      );
    }
    await this.#sessions.get(sessionId)?.release();
    this.#sessions.set(sessionId, session);
    this.#counters.sessionsCreated += 1;
    return { inputNames: session.inputNames, outputNames: session.outputNames };
  }

  async releaseSession(sessionId: string): Promise<void> {
    const session = this.#sessions.get(sessionId);
    this.#sessions.delete(sessionId);
    await session?.release();
  }

  async run({ sessionId, inputs, weightsId }: RunPayload) {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) {
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_SESSION',
        `no session '${sessionId}' in compute thread ${this.context.threadIndex}`,
        { details: { sessionId, threadIndex: this.context.threadIndex } },
      );
    }
    const feeds: Record<string, Tensor> = {};
    if (weightsId !== undefined) {
      const weights = await this.#weights(weightsId);
      // Only the weights this graph takes: a weight set may carry tensors another graph uses.
      for (const name of session.inputNames) {
        const tensor = weights.get(name);
        if (tensor !== undefined) feeds[name] = tensor;
      }
    }
    for (const [name, tensor] of Object.entries(inputs)) {
      feeds[name] = toOrtTensor(this.ort, name, tensor);
    }
    let outputs: InferenceSession.OnnxValueMapType;
    try {
      outputs = await session.run(feeds);
    } catch (error) {
      throw new FlowfleetError(
        'BACK_ORT_RUN_FAILED',
        `ONNX Runtime run failed: ${messageOf(error)}`,
        { details: { sessionId, threadIndex: this.context.threadIndex } },
      );
    }
    const value: Record<string, TensorData> = {};
    for (const [name, output] of Object.entries(outputs)) {
      value[name] = toTensorData(name, output as Tensor);
    }
    this.#counters.runs += 1;
    return tensorsReply(value);
  }

  async probe(provider: OrtProvider): Promise<ProviderProbe> {
    const { ort } = this;
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

  stats(): OrtHandlerStats {
    return { ...this.#counters, sessionsLive: this.#sessions.size };
  }

  async #weights(weightsId: string): Promise<Map<string, Tensor>> {
    const tensors = this.context.weights(weightsId);
    let converted = this.#converted.get(tensors);
    if (converted !== undefined) return converted;
    const readsShared = await this.#readsShared();
    // Another run of the same set may have converted it meanwhile.
    converted = this.#converted.get(tensors);
    if (converted !== undefined) return converted;
    converted = new Map();
    for (const [name, tensor] of tensors) {
      const { data } = tensor;
      if (readsShared || !(data.buffer instanceof SharedArrayBuffer)) {
        converted.set(name, toOrtTensor(this.ort, name, tensor));
        continue;
      }
      // `slice` allocates an ordinary ArrayBuffer: this thread's private copy.
      converted.set(name, toOrtTensor(this.ort, name, { ...tensor, data: data.slice() }));
      this.#counters.weightBytesPrivateCopies += data.byteLength;
    }
    this.#converted.set(tensors, converted);
    return converted;
  }

  /**
   * Whether this thread's onnxruntime-node binding runs on a tensor over a SharedArrayBuffer
   * (asked once: a run of the probe model). A refusal is the answer, not a failure.
   */
  #readsShared(): Promise<boolean> {
    this.#sharedProbe ??= (async () => {
      const { ort } = this;
      const session = await ort.InferenceSession.create(
        PROBE_MODEL_BYTES,
        ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 }),
      );
      try {
        const x = sharedFloat32Array(1);
        x[0] = 42;
        const out = await session.run({
          [PROBE_MODEL_IO.input]: new ort.Tensor('float32', x, [1]),
        });
        const y = out[PROBE_MODEL_IO.output]?.data;
        return y instanceof Float32Array && y[0] === 42;
      } catch {
        return false;
      } finally {
        await session.release();
      }
    })();
    return this.#sharedProbe;
  }
}

/** The pool loads this in each thread (`OrtSessions.attach`). */
export const createComputeHandler: ComputeHandlerFactory = async (context) => {
  const thread = new OrtThread(await loadOrt(), context);
  return {
    handle(method, payload) {
      switch (method) {
        case 'createSession':
          return thread.createSession(payload as CreateSessionPayload);
        case 'releaseSession':
          return thread.releaseSession((payload as { sessionId: string }).sessionId);
        case 'run':
          return thread.run(payload as RunPayload);
        case 'probe':
          return thread.probe((payload as { provider: OrtProvider }).provider);
        default:
          throw new Error(`the ort handler has no method '${method}'`);
      }
    },
    stats: () => ({ ...thread.stats() }),
  };
};
