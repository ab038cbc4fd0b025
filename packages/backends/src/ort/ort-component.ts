import { FlowfleetError } from '@flowfleet/errors';
import type {
  CapturedForward,
  ComponentForward,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import {
  onnxArtifactsOf,
  type InputDims,
  type OnnxArtifacts,
  type OrtComponentSpec,
} from './onnx-artifacts.js';
import type { OrtWorkerPool } from './ort-worker-pool.js';
import { probeExecutionProvider } from './probe-providers.js';
import type { OrtProvider } from './session-options.js';
import { sharedOrtPool } from './shared-pool.js';

/** Which provider a builder targets and which pool its sessions live in. */
export interface OrtComponentBuilderOptions {
  /** Default `cpu`. */
  readonly provider?: OrtProvider;
  /** Default: the process-wide pool (`sharedOrtPool`). */
  readonly pool?: () => Promise<OrtWorkerPool>;
}

/** A component builder as the COMPONENTS registry stores it. */
export type OrtComponentBuilder = (
  spec: OrtComponentSpec,
  instance: unknown,
) => Promise<ComponentForward>;

/** One eager session shared by every component built from the same spec. */
interface EagerSession {
  readonly sessionId: Promise<string>;
  refs: number;
}

/**
 * Makes an `ort-<provider>` component builder. Each component runs the spec's eager graph (one
 * session per spec graph, shared; weights fed as inputs, uploaded once per `WeightSet.id`) and
 * can capture a session specialised to one weight set and fixed dims (weights baked in).
 * @throws (from the builder) BACK_ORT_NO_ONNX_ARTIFACT, BACK_PROVIDER_UNAVAILABLE,
 *   BACK_ORT_SESSION_FAILED, BACK_ORT_LOAD_FAILED.
 */
export function createOrtComponentBuilder(
  options: OrtComponentBuilderOptions = {},
): OrtComponentBuilder {
  const provider = options.provider ?? 'cpu';
  const getPool = options.pool ?? sharedOrtPool;
  // One eager session per (pool, spec graph). The graph is identified by the spec's `artifacts`
  // object rather than `spec.id`: card component ids ('dit') repeat across cards, while every
  // instance of one card shares that card's artifacts. Keyed by pool too: a closed and
  // restarted shared pool has none of the old sessions.
  const eagerSessions = new WeakMap<OrtWorkerPool, WeakMap<object, EagerSession>>();

  function acquireEager(
    pool: OrtWorkerPool,
    spec: OrtComponentSpec,
    artifacts: OnnxArtifacts,
  ): EagerSession {
    const graphKey: object = spec.artifacts ?? spec;
    let byGraph = eagerSessions.get(pool);
    if (byGraph === undefined) eagerSessions.set(pool, (byGraph = new WeakMap()));
    let eager = byGraph.get(graphKey);
    if (eager === undefined) {
      const model = artifacts.buildOnnx({ form: 'eager' });
      const created: EagerSession = {
        sessionId: pool.createSession(model, { provider, replicate: true }),
        refs: 0,
      };
      created.sessionId.catch(() => {
        if (byGraph.get(graphKey) === created) byGraph.delete(graphKey);
      });
      byGraph.set(graphKey, created);
      eager = created;
    }
    eager.refs += 1;
    return eager;
  }

  async function releaseEager(
    pool: OrtWorkerPool,
    spec: OrtComponentSpec,
    eager: EagerSession,
  ): Promise<void> {
    eager.refs -= 1;
    if (eager.refs > 0) return;
    const byGraph = eagerSessions.get(pool);
    const graphKey: object = spec.artifacts ?? spec;
    if (byGraph?.get(graphKey) === eager) byGraph.delete(graphKey);
    await pool.releaseSession(await eager.sessionId);
  }

  return async (spec) => {
    const artifacts = onnxArtifactsOf(spec);
    const pool = await getPool();
    if (provider !== 'cpu') {
      const probe = await probeExecutionProvider(provider, { pool });
      if (!probe.available) {
        throw new FlowfleetError(
          'BACK_PROVIDER_UNAVAILABLE',
          `onnxruntime ${provider}: ${probe.reason}`,
          {
            details: { provider, reason: probe.reason },
          },
        );
      }
    }
    const eager = acquireEager(pool, spec, artifacts);
    let sessionId: string;
    try {
      sessionId = await eager.sessionId;
    } catch (error) {
      eager.refs -= 1;
      throw error;
    }
    return new OrtComponent(spec, `ort-${provider}`, provider, pool, artifacts, sessionId, () =>
      releaseEager(pool, spec, eager),
    );
  };
}

const sharedBuilders = new Map<OrtProvider, OrtComponentBuilder>();

/**
 * The builder of one provider on the process-wide pool, made once per provider so every cell of
 * that provider shares its eager sessions: `declareOrtCells({builderFor: ortBuilderFor, …})`.
 */
export function ortBuilderFor(provider: OrtProvider): OrtComponentBuilder {
  let builder = sharedBuilders.get(provider);
  if (builder === undefined) {
    builder = createOrtComponentBuilder({ provider });
    sharedBuilders.set(provider, builder);
  }
  return builder;
}

/** The `ort-cpu` builder on the process-wide pool. */
export const buildOrtComponent: OrtComponentBuilder = (spec, instance) =>
  ortBuilderFor('cpu')(spec, instance);

function dimsOf(inputs: TensorMap): InputDims {
  return Object.fromEntries(Object.entries(inputs).map(([name, tensor]) => [name, tensor.dims]));
}

class OrtComponent implements ComponentForward {
  readonly kind: string;
  private readonly uploaded = new Set<string>();
  private readonly captured = new Set<CapturedForward>();
  private readonly eagerExtras = new Map<string, TensorMap>();
  private disposing: Promise<void> | undefined;

  constructor(
    private readonly spec: OrtComponentSpec,
    readonly source: string,
    private readonly provider: OrtProvider,
    private readonly pool: OrtWorkerPool,
    private readonly artifacts: OnnxArtifacts,
    private readonly eagerSessionId: string,
    private readonly releaseEager: () => Promise<void>,
  ) {
    this.kind = spec.kind;
  }

  async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
    this.assertLive();
    // A no-op after the first upload of this id (the pool dedupes), so every run can ask.
    await this.pool.uploadWeights(weights.id, weights.tensors);
    this.uploaded.add(weights.id);
    const feeds = { ...this.eagerInputsFor(dimsOf(inputs)), ...inputs };
    return this.pool.run(this.eagerSessionId, feeds, { weightsId: weights.id });
  }

  async capture(
    weights: WeightSet,
    inputDims: Readonly<Record<string, readonly number[]>>,
  ): Promise<CapturedForward> {
    this.assertLive();
    const model = this.artifacts.buildOnnx({
      form: 'captured',
      weights: weights.tensors,
      dims: inputDims,
      ...this.artifacts.capturedDims(inputDims),
    });
    const sessionId = await this.pool.createSession(model, { provider: this.provider });
    const { pool, captured } = this;
    let released: Promise<void> | undefined;
    const forward: CapturedForward = {
      bytesHeld: model.byteLength,
      run: (inputs) => pool.run(sessionId, inputs),
      dispose: () => {
        released ??= (async () => {
          captured.delete(forward);
          await pool.releaseSession(sessionId);
        })();
        return released;
      },
    };
    captured.add(forward);
    return forward;
  }

  async releaseWeights(weightsId: string): Promise<void> {
    this.uploaded.delete(weightsId);
    await this.pool.releaseWeights(weightsId);
  }

  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      const steps = [
        ...[...this.captured].map((forward) => forward.dispose()),
        ...[...this.uploaded].map((id) => this.pool.releaseWeights(id)),
        this.releaseEager(),
      ];
      this.uploaded.clear();
      const failed = (await Promise.allSettled(steps)).find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    })();
    return this.disposing;
  }

  /** The eager graph's extra inputs for these dims (e.g. RoPE tables), computed once per shape. */
  private eagerInputsFor(inputDims: InputDims): TensorMap {
    const key = JSON.stringify(inputDims);
    let extra = this.eagerExtras.get(key);
    if (extra === undefined) {
      // Shapes are few (one per resolution and batch); the bound only guards against a leak.
      if (this.eagerExtras.size >= 32) this.eagerExtras.clear();
      extra = this.artifacts.eagerInputs(inputDims);
      this.eagerExtras.set(key, extra);
    }
    return extra;
  }

  private assertLive(): void {
    if (this.disposing !== undefined) {
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_SESSION',
        `component '${this.spec.id}' was disposed`,
        {
          details: { componentId: this.spec.id },
        },
      );
    }
  }
}
