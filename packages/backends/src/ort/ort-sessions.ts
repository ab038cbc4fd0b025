import { FlowfleetError } from '@flowfleet/errors';
import {
  moduleWorkerUrl,
  packedTensors,
  type ComputePool,
  type ComputeThread,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import {
  ORT_HANDLER_ID,
  type OrtHandlerStats,
  type OrtThreadStats,
  type ProviderProbe,
} from './ort-protocol.js';
import { ORT_PROVIDERS, type OrtProvider, type OrtSessionSettings } from './session-options.js';

/** Options of `OrtSessions.attach`. */
export interface OrtSessionsOptions {
  /** intraOpNumThreads of each session unless the session says otherwise (default 1). */
  readonly intraOpThreads?: number;
}

/** Options of one session. */
export interface OrtCreateSessionOptions {
  readonly provider?: OrtProvider;
  readonly intraOpThreads?: number;
  /**
   * Keep the model bytes so any thread can build its own copy of the session on demand (a shared
   * eager session: small bytes, many callers). Default false: the session lives in one thread and
   * the bytes are not retained (a captured graph: weights baked in, one user at a time).
   */
  readonly replicate?: boolean;
}

/** Options of one forward. */
export interface OrtRunOptions {
  /** Fed as extra inputs (only those the graph takes); uploaded once per thread and id. */
  readonly weights?: WeightSet;
  /** Transfer the inputs' buffers to the thread instead of copying; the caller's arrays detach. */
  readonly transferInputs?: boolean;
  readonly signal?: AbortSignal;
}

interface SessionEntry {
  readonly id: string;
  readonly settings: OrtSessionSettings;
  /** Retained only for replicable sessions. */
  readonly model: Uint8Array | undefined;
  /** The one thread of a non-replicable session. */
  readonly home: ComputeThread | undefined;
}

const SESSION = 'ort-session:';

/**
 * ONNX Runtime on a compute pool: the pool's threads own the sessions (`session.run` blocks the
 * thread it runs on, DESIGN.md §3, §8), weight sets stay resident in them by id, outputs come back
 * as transferred ArrayBuffers. Provider probes are cached here. The pool's owner closes the pool;
 * this object holds no threads of its own.
 */
export class OrtSessions {
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #probes = new Map<OrtProvider, Promise<ProviderProbe>>();
  readonly #settled = new Map<OrtProvider, ProviderProbe>();
  #nextSessionId = 1;

  private constructor(
    readonly pool: ComputePool,
    private readonly intraOpThreads: number,
  ) {}

  /**
   * Loads the ONNX Runtime handler into every thread of `pool` (each loads onnxruntime-node).
   * @throws BACK_ORT_LOAD_FAILED when onnxruntime-node cannot load; PLAT_COMPUTE_* pool errors.
   */
  static async attach(pool: ComputePool, options: OrtSessionsOptions = {}): Promise<OrtSessions> {
    await pool.load({ id: ORT_HANDLER_ID, url: moduleWorkerUrl(import.meta.url, 'ort-handler') });
    return new OrtSessions(pool, Math.max(1, Math.floor(options.intraOpThreads ?? 1)));
  }

  /**
   * Creates a session from ONNX model bytes and returns its id.
   * @throws BACK_ORT_SESSION_FAILED with the runtime's message; PLAT_COMPUTE_POOL_CLOSED.
   */
  async createSession(model: Uint8Array, options: OrtCreateSessionOptions = {}): Promise<string> {
    const thread = this.pool.pick((t) => t.countResidents(SESSION));
    const id = `ort-session-${this.#nextSessionId++}`;
    const replicate = options.replicate === true;
    const entry: SessionEntry = {
      id,
      settings: {
        provider: options.provider ?? 'cpu',
        intraOpThreads: options.intraOpThreads ?? this.intraOpThreads,
      },
      model: replicate ? model.slice() : undefined,
      home: replicate ? undefined : thread,
    };
    await this.#materialise(thread, entry, model);
    this.#sessions.set(id, entry);
    return id;
  }

  /** Releases a session in every thread that holds it; unknown ids are ignored. */
  async releaseSession(sessionId: string): Promise<void> {
    if (!this.#sessions.delete(sessionId)) return;
    await this.pool.forget(`${SESSION}${sessionId}`, (thread) =>
      thread.call(ORT_HANDLER_ID, 'releaseSession', { sessionId }),
    );
  }

  /** Drops a weight set from every thread (a later run with it uploads it again). */
  releaseWeights(weightsId: string): Promise<void> {
    return this.pool.releaseWeights(weightsId);
  }

  /**
   * Runs one forward in a thread (a pinned session's own, else the least loaded one, preferring
   * one that holds the session) and returns its outputs (buffers transferred, not copied).
   * @throws BACK_ORT_RUN_FAILED, BACK_ORT_UNKNOWN_SESSION, BACK_ORT_UNSUPPORTED_DTYPE,
   *   PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED; the signal's reason when aborted.
   */
  async run(
    sessionId: string,
    inputs: TensorMap,
    options: OrtRunOptions = {},
  ): Promise<Record<string, TensorData>> {
    options.signal?.throwIfAborted();
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined) {
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_SESSION',
        `no ONNX Runtime session '${sessionId}'`,
        {
          details: { sessionId },
        },
      );
    }
    const thread = this.#threadFor(entry);
    const { weights } = options;
    const reply = this.pool.dispatch(
      thread,
      {
        prepare: () => this.#materialise(thread, entry, entry.model),
        ...(weights === undefined ? {} : { weights }),
      },
      () => {
        options.signal?.throwIfAborted();
        // Given away: the caller's own buffers move. Else compact copies move (one copy of only
        // the viewed bytes, not a structured clone of the buffer a view sits in).
        const sent =
          options.transferInputs === true
            ? { tensors: inputs, transfer: bufferList(inputs) }
            : packedTensors(inputs);
        return thread.call<Record<string, TensorData>>(
          ORT_HANDLER_ID,
          'run',
          {
            sessionId,
            inputs: sent.tensors,
            ...(weights === undefined ? {} : { weightsId: weights.id }),
          },
          sent.transfer,
        );
      },
    );
    return options.signal === undefined ? reply : abortable(reply, options.signal);
  }

  /**
   * Whether ONNX Runtime can create a session with exactly this execution provider here (no cpu
   * fallback: DESIGN.md §8), found by creating one on the probe model in a thread. Cached: the
   * first call probes, later calls share the answer; a failure to run the probe is forgotten.
   * @throws PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED when no thread can run it.
   */
  probe(provider: OrtProvider): Promise<ProviderProbe> {
    let probing = this.#probes.get(provider);
    if (probing === undefined) {
      const started = Promise.resolve()
        .then(() => this.pool.pick().call<ProviderProbe>(ORT_HANDLER_ID, 'probe', { provider }))
        .then((result) => {
          this.#settled.set(provider, result);
          return result;
        });
      probing = started;
      this.#probes.set(provider, started);
      started.catch(() => {
        if (this.#probes.get(provider) === started) this.#probes.delete(provider);
      });
    }
    return probing;
  }

  /** Probes every provider flowfleet knows (cpu, cuda, webgpu). @throws as `probe` */
  async probeAll(): Promise<Readonly<Record<OrtProvider, ProviderProbe>>> {
    const probes = await Promise.all(ORT_PROVIDERS.map((provider) => this.probe(provider)));
    return Object.fromEntries(probes.map((p) => [p.provider, p])) as Record<
      OrtProvider,
      ProviderProbe
    >;
  }

  /** The cached probe of a provider, or undefined before it was probed (never probes). */
  cachedProbe(provider: OrtProvider): ProviderProbe | undefined {
    return this.#settled.get(provider);
  }

  /** Each live thread's counters (the pool's and the ONNX Runtime handler's). */
  async stats(): Promise<OrtThreadStats[]> {
    return (await this.pool.stats()).map((thread) => {
      const ort = (thread.handlers[ORT_HANDLER_ID] ?? {}) as Partial<OrtHandlerStats>;
      return {
        threadIndex: thread.threadIndex,
        sessionsCreated: ort.sessionsCreated ?? 0,
        sessionsLive: ort.sessionsLive ?? 0,
        runs: ort.runs ?? 0,
        weightBytesPrivateCopies: ort.weightBytesPrivateCopies ?? 0,
        weightUploads: thread.weightUploads,
        weightBytesShared: thread.weightBytesShared,
        weightBytesCopied: thread.weightBytesCopied,
        weightSetsLive: thread.weightSetsLive,
        outputBuffersTransferred: thread.outputBuffersTransferred,
        outputBytesTransferred: thread.outputBytesTransferred,
      };
    });
  }

  /** A pinned session's home (if still alive), else the least loaded thread, warm ones first. */
  #threadFor(entry: SessionEntry): ComputeThread {
    const { home } = entry;
    if (home === undefined) {
      return this.pool.pick((thread) => (thread.hasResident(`${SESSION}${entry.id}`) ? 0 : 1));
    }
    if (!this.pool.isCurrent(home)) {
      if (this.pool.isClosed) this.pool.pick(); // throws PLAT_COMPUTE_POOL_CLOSED
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_SESSION',
        `ONNX Runtime session '${entry.id}' was lost with compute thread ${home.index}`,
        { details: { sessionId: entry.id, threadIndex: home.index } },
      );
    }
    return home;
  }

  #materialise(
    thread: ComputeThread,
    entry: SessionEntry,
    model: Uint8Array | undefined,
  ): Promise<unknown> {
    return thread.resident(`${SESSION}${entry.id}`, () => {
      if (model === undefined) {
        return Promise.reject(
          new Error(`session '${entry.id}' has no model bytes to rebuild from`),
        );
      }
      return thread.call(ORT_HANDLER_ID, 'createSession', {
        sessionId: entry.id,
        model,
        settings: entry.settings,
      });
    });
  }
}

function bufferList(inputs: TensorMap): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const tensor of Object.values(inputs)) {
    const { buffer } = tensor.data;
    if (!(buffer instanceof SharedArrayBuffer)) buffers.add(buffer);
  }
  return [...buffers];
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
