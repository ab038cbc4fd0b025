import { FlowfleetError } from '@flowfleet/errors';
import type { ModelCard } from '@flowfleet/models';
import type {
  ComponentForward,
  ComponentSpec,
  Platform,
  PlatformFacts,
  WeightSet,
} from '@flowfleet/platform';
import { GraphCapturer } from './graph-capturer.js';
import type { KernelLookup, StepInstance } from '@flowfleet/models';
import { WeightVersions, type ResidentVersion } from './weight-versions.js';

/** The part of a Platform a ModelInstance uses (a plain object works in tests). */
export interface InstancePlatform {
  readonly facts: PlatformFacts;
  readonly kernels: KernelLookup;
  buildComponent: Platform['buildComponent'];
}

/** One component's initial weights. */
export interface InitialWeights {
  readonly version: number;
  readonly weights: WeightSet;
}

/** Options of `ModelInstance.create`. */
export interface ModelInstanceOptions {
  readonly card: ModelCard;
  readonly platform: InstancePlatform;
  /** Initial weights per component id; every card component needs one. */
  readonly weights: Readonly<Record<string, InitialWeights>>;
}

/** The weights a rollout pinned when it started; release exactly once when it ends. */
export interface WeightLease {
  readonly versions: Readonly<Record<string, number>>;
  weights(componentId: string): WeightSet;
  /** Unpins; releases superseded versions nobody else holds. Idempotent. */
  release(): Promise<void>;
}

interface BuiltComponent {
  readonly component: ComponentForward;
  readonly source: string;
}

/**
 * A model card on a platform (DESIGN.md §3): every component built once, per-component weight
 * versions, one GraphCapturer. `setWeightsVersion` makes a version current for new rollouts while
 * rollouts in flight finish on theirs; a superseded version is released (its cached uploads
 * dropped and its graphs disposed) when its last rollout ends.
 */
export class ModelInstance {
  readonly card: ModelCard;
  readonly platform: InstancePlatform;
  readonly capturer: GraphCapturer;
  readonly #components: ReadonlyMap<string, BuiltComponent>;
  readonly #versions: WeightVersions;
  #closed = false;

  private constructor(
    card: ModelCard,
    platform: InstancePlatform,
    components: ReadonlyMap<string, BuiltComponent>,
    versions: WeightVersions,
  ) {
    this.card = card;
    this.platform = platform;
    this.#components = components;
    this.#versions = versions;
    this.capturer = new GraphCapturer({ device: platform.facts.device, arch: platform.facts.arch });
  }

  /**
   * Builds every component of the card once (registry along the device chain, else the card's
   * TS reference factory) and holds the initial weights.
   * @throws FlowfleetError RT_WEIGHTS_MISSING, PLAT_NO_COMPONENT
   */
  static async create(options: ModelInstanceOptions): Promise<ModelInstance> {
    const { card, platform, weights } = options;
    const missing = card.components.map((c) => c.id).filter((id) => weights[id] === undefined);
    if (missing.length > 0) {
      throw new FlowfleetError(
        'RT_WEIGHTS_MISSING',
        `no initial weights for component(s) ${missing.join(', ')} of ${card.id}`,
        { details: { card: card.id, missing } },
      );
    }
    const built = new Map<string, BuiltComponent>();
    try {
      for (const spec of card.components) {
        const build = await platform.buildComponent(
          spec as ComponentSpec<unknown, ComponentForward>,
          card,
        );
        built.set(spec.id, { component: build.component, source: build.source });
      }
    } catch (error) {
      await Promise.allSettled([...built.values()].map((b) => b.component.dispose()));
      throw error;
    }
    const initial: ResidentVersion[] = card.components.map((c) => ({
      componentId: c.id,
      version: weights[c.id]!.version,
      weights: weights[c.id]!.weights,
    }));
    return new ModelInstance(card, platform, built, new WeightVersions(initial));
  }

  /** The component ids of the card, in card order. */
  get componentIds(): readonly string[] {
    return [...this.#components.keys()];
  }

  /** The built component. @throws FlowfleetError RT_UNKNOWN_COMPONENT */
  component(id: string): ComponentForward {
    return this.#built(id).component;
  }

  /** Which backend built the component (`ort-cpu`, `cpu-reference`, `card` …). */
  componentSource(id: string): string {
    const built = this.#built(id);
    return built.component.source ?? built.source;
  }

  /** The version new rollouts start on. @throws FlowfleetError RT_UNKNOWN_COMPONENT */
  currentVersion(id: string): number {
    return this.#versions.current(id).version;
  }

  /**
   * The weight set new rollouts start on (a sync builds the next version from it: a delta keeps
   * its unchanged tensors, a LoRA merges into it). @throws FlowfleetError RT_UNKNOWN_COMPONENT
   */
  currentWeights(id: string): WeightSet {
    return this.#versions.current(id).weights;
  }

  /** Every version of the component still held (current first). */
  residentVersions(id: string): readonly number[] {
    return this.#versions.resident(id);
  }

  /** How many rollouts in flight pin `version` of the component. */
  pinCount(id: string, version: number): number {
    return this.#versions.pins(id, version);
  }

  /**
   * Makes `version` current for new rollouts. The superseded version is released at once when no
   * rollout pins it, else when its last rollout ends; release disposes its graphs and drops
   * what the component cached for it.
   * @throws FlowfleetError RT_UNKNOWN_COMPONENT, RT_WEIGHTS_VERSION_EXISTS, RT_INSTANCE_CLOSED
   */
  async setWeightsVersion(componentId: string, version: number, weights: WeightSet): Promise<void> {
    this.#checkOpen();
    this.#built(componentId);
    const superseded = this.#versions.stage(componentId, version, weights);
    if (superseded !== undefined) await this.#release([superseded]);
  }

  /** Pins the current version of every component for one rollout. @throws RT_INSTANCE_CLOSED */
  acquireWeights(): WeightLease {
    this.#checkOpen();
    const pinned = this.#versions.pin();
    const byId = new Map(pinned.map((p) => [p.componentId, p]));
    const versions = Object.freeze(
      Object.fromEntries(pinned.map((p) => [p.componentId, p.version])),
    );
    let released: Promise<void> | undefined;
    return {
      versions,
      weights: (id) => {
        const entry = byId.get(id);
        if (entry === undefined) throw this.#unknown(id);
        return entry.weights;
      },
      release: () => {
        released ??= this.#release(this.#versions.unpin(pinned));
        return released;
      },
    };
  }

  /** The narrow view a loop's steps get: components, pinned weights, kernels. */
  stepInstance(lease: WeightLease): StepInstance {
    return {
      kernels: this.platform.kernels,
      component: (id) => this.component(id),
      weights: (id) => lease.weights(id),
      versions: lease.versions,
    };
  }

  /** Disposes graphs, components and cached weights; idempotent, every step runs. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const results = await Promise.allSettled([
      this.capturer.close(),
      ...this.#versions
        .all()
        .map((v) => this.component(v.componentId).releaseWeights?.(v.weights.id)),
    ]);
    results.push(
      ...(await Promise.allSettled(
        [...this.#components.values()].map((b) => b.component.dispose()),
      )),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
  }

  async #release(versions: readonly ResidentVersion[]): Promise<void> {
    if (this.#closed) return;
    for (const { componentId, version, weights } of versions) {
      await this.capturer.invalidateVersion(componentId, version);
      await this.component(componentId).releaseWeights?.(weights.id);
    }
  }

  #built(id: string): BuiltComponent {
    const built = this.#components.get(id);
    if (built === undefined) throw this.#unknown(id);
    return built;
  }

  #unknown(id: string): FlowfleetError {
    return new FlowfleetError('RT_UNKNOWN_COMPONENT', `no component '${id}' on ${this.card.id}`, {
      details: { component: id, known: [...this.#components.keys()] },
    });
  }

  #checkOpen(): void {
    if (this.#closed)
      throw new FlowfleetError('RT_INSTANCE_CLOSED', 'the model instance is closed');
  }
}
