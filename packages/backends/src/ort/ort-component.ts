import { FlowfleetError } from '@flowfleet/errors';
import type {
  CapturedForward,
  ComponentForward,
  InputDims,
  OnnxArtifacts,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import { onnxArtifactsOf, type OrtComponentSpec } from './onnx-artifacts.js';
import type { DeclareOrtCellsOptions } from '../ort-cells.js';
import type { OrtSessions } from './ort-sessions.js';
import type { OrtProvider } from './session-options.js';

/** Which provider a builder targets and where its sessions live. */
export interface OrtComponentBuilderOptions {
  /** Default `cpu`. */
  readonly provider?: OrtProvider;
  /** ONNX Runtime on the owner's compute pool (`OrtSessions.attach(pool)`). */
  readonly sessions: OrtSessions;
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
 * session per spec graph, shared; weights fed as inputs, uploaded once per `WeightSet.id` and
 * thread) and can capture a session specialised to one weight set and fixed dims (weights baked
 * in).
 * @throws (from the builder) BACK_ORT_NO_ONNX_ARTIFACT, BACK_PROVIDER_UNAVAILABLE,
 *   BACK_ORT_SESSION_FAILED.
 */
export function createOrtComponentBuilder(
  options: OrtComponentBuilderOptions,
): OrtComponentBuilder {
  const provider = options.provider ?? 'cpu';
  const { sessions } = options;
  // One eager session per spec graph. The graph is identified by the spec's `onnx` artifacts
  // object rather than `spec.id`: card component ids ('dit') repeat across cards, while every
  // instance of one card shares that card's artifacts.
  const eagerSessions = new WeakMap<object, EagerSession>();

  function acquireEager(artifacts: OnnxArtifacts): EagerSession {
    const graphKey: object = artifacts;
    let eager = eagerSessions.get(graphKey);
    if (eager === undefined) {
      const model = artifacts.buildOnnx({ form: 'eager' });
      const created: EagerSession = {
        sessionId: sessions.createSession(model, { provider, replicate: true }),
        refs: 0,
      };
      created.sessionId.catch(() => {
        if (eagerSessions.get(graphKey) === created) eagerSessions.delete(graphKey);
      });
      eagerSessions.set(graphKey, created);
      eager = created;
    }
    eager.refs += 1;
    return eager;
  }

  async function releaseEager(artifacts: OnnxArtifacts, eager: EagerSession): Promise<void> {
    eager.refs -= 1;
    if (eager.refs > 0) return;
    const graphKey: object = artifacts;
    if (eagerSessions.get(graphKey) === eager) eagerSessions.delete(graphKey);
    await sessions.releaseSession(await eager.sessionId);
  }

  return async (spec) => {
    const artifacts = onnxArtifactsOf(spec);
    if (provider !== 'cpu') {
      const probe = await sessions.probe(provider);
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
    const eager = acquireEager(artifacts);
    let sessionId: string;
    try {
      sessionId = await eager.sessionId;
    } catch (error) {
      eager.refs -= 1;
      throw error;
    }
    return new OrtComponent(spec, `ort-${provider}`, provider, sessions, artifacts, sessionId, () =>
      releaseEager(artifacts, eager),
    );
  };
}

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
    private readonly sessions: OrtSessions,
    private readonly artifacts: OnnxArtifacts,
    private readonly eagerSessionId: string,
    private readonly releaseEager: () => Promise<void>,
  ) {
    this.kind = spec.kind;
  }

  async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
    this.assertLive();
    this.uploaded.add(weights.id);
    const feeds = { ...this.eagerInputsFor(dimsOf(inputs)), ...inputs };
    return this.sessions.run(this.eagerSessionId, feeds, { weights });
  }

  async capture(weights: WeightSet, inputDims: InputDims): Promise<CapturedForward> {
    this.assertLive();
    const model = this.artifacts.buildOnnx({
      form: 'captured',
      weights: weights.tensors,
      inputDims,
    });
    const sessionId = await this.sessions.createSession(model, { provider: this.provider });
    const { sessions, captured } = this;
    let released: Promise<void> | undefined;
    const forward: CapturedForward = {
      bytesHeld: model.byteLength,
      run: (inputs) => sessions.run(sessionId, inputs),
      dispose: () => {
        released ??= (async () => {
          captured.delete(forward);
          await sessions.releaseSession(sessionId);
        })();
        return released;
      },
    };
    captured.add(forward);
    return forward;
  }

  async releaseWeights(weightsId: string): Promise<void> {
    this.uploaded.delete(weightsId);
    await this.sessions.releaseWeights(weightsId);
  }

  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      const steps = [
        ...[...this.captured].map((forward) => forward.dispose()),
        ...[...this.uploaded].map((id) => this.sessions.releaseWeights(id)),
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

/**
 * What `declareOrtCells` needs to build on `sessions`: one builder per provider (each shares its
 * eager sessions among the components it builds) and the cached provider probes.
 */
export function ortCellWiring(
  sessions: OrtSessions,
): Pick<DeclareOrtCellsOptions, 'builderFor' | 'cachedProbe'> {
  return {
    builderFor: (provider) => createOrtComponentBuilder({ provider, sessions }),
    cachedProbe: (provider) => sessions.cachedProbe(provider),
  };
}
