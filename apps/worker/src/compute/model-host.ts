import { FlowfleetError } from '@flowfleet/errors';
import type { CardRegistry, ModelCard, ModelComponentSpec } from '@flowfleet/models';
import type { Platform, TensorData, WeightSet } from '@flowfleet/platform';
import { ModelInstance } from '@flowfleet/runtime';

/** Version 0 of every component: the card's deterministic initial weights (DESIGN §5). */
export const INITIAL_WEIGHTS_VERSION = 0;
/** The `initWeights` seed of version 0, the same on every worker so their rollouts agree. */
export const INITIAL_WEIGHTS_SEED = 0;

/** The expected tensor shapes of one component of a card. */
export function componentShapes(card: ModelCard, componentId: string): Map<string, number[]> {
  const spec = card.components.find((component) => component.id === componentId);
  if (spec === undefined) {
    throw new FlowfleetError(
      'RT_UNKNOWN_COMPONENT',
      `no component '${componentId}' on ${card.id}`,
      {
        details: { component: componentId, known: card.components.map((c) => c.id) },
      },
    );
  }
  return spec.parameterShapes();
}

/**
 * One ModelInstance per model card the worker serves, built once at start, plus the weight
 * bookkeeping the sync needs. Weight-set ids carry the worker id and content hash, because the
 * ONNX Runtime pool is process-wide and caches uploads by id.
 */
export class ModelHost {
  readonly #instances: ReadonlyMap<string, ModelInstance>;
  readonly #weightIdPrefix: string;
  #closed: Promise<void> | undefined;

  private constructor(instances: ReadonlyMap<string, ModelInstance>, weightIdPrefix: string) {
    this.#instances = instances;
    this.#weightIdPrefix = weightIdPrefix;
  }

  /**
   * Builds an instance of each model, looked up in `cards`, on `platform` with version-0 weights.
   * @throws FlowfleetError MODEL_UNKNOWN_CARD, PLAT_NO_COMPONENT, RT_WEIGHTS_MISSING
   */
  static async create(
    models: readonly string[],
    platform: Platform,
    weightIdPrefix: string,
    cards: CardRegistry,
  ): Promise<ModelHost> {
    const instances = new Map<string, ModelInstance>();
    try {
      for (const model of models) {
        const card = cards.get(model);
        const weights = Object.fromEntries(
          card.components.map((component) => [
            component.id,
            {
              version: INITIAL_WEIGHTS_VERSION,
              weights: {
                id: `${weightIdPrefix}/${card.id}/${component.id}@${INITIAL_WEIGHTS_VERSION}`,
                tensors: component.initWeights(INITIAL_WEIGHTS_SEED),
              },
            },
          ]),
        );
        instances.set(model, await ModelInstance.create({ card, platform, weights }));
      }
    } catch (error) {
      await Promise.allSettled([...instances.values()].map((instance) => instance.close()));
      throw error;
    }
    return new ModelHost(instances, weightIdPrefix);
  }

  /** The model ids, in the order given. */
  get models(): readonly string[] {
    return [...this.#instances.keys()];
  }

  /** The instance of `model`. @throws FlowfleetError MODEL_UNKNOWN_CARD when not loaded */
  instance(model: string): ModelInstance {
    const instance = this.#instances.get(model);
    if (instance === undefined) {
      throw new FlowfleetError('MODEL_UNKNOWN_CARD', `model '${model}' is not loaded here`, {
        details: { model, known: this.models },
      });
    }
    return instance;
  }

  /** Every component id of every loaded card, sorted, without duplicates. */
  componentIds(): string[] {
    return [
      ...new Set([...this.#instances.values()].flatMap((instance) => instance.componentIds)),
    ].sort();
  }

  /** The version new rollouts start on, per component (the lowest over cards sharing an id). */
  held(): Record<string, number> {
    const held: Record<string, number> = {};
    for (const instance of this.#instances.values()) {
      for (const id of instance.componentIds) {
        const version = instance.currentVersion(id);
        held[id] = Math.min(held[id] ?? version, version);
      }
    }
    return held;
  }

  /** The expected shapes of `component` (from the first card that has it). */
  shapes(component: string): Map<string, number[]> {
    return this.spec(component).parameterShapes();
  }

  /**
   * The card's spec of `component` (the first card that has it): its shapes and checkpoint key
   * maps. @throws FlowfleetError RT_UNKNOWN_COMPONENT
   */
  spec(component: string): ModelComponentSpec {
    for (const instance of this.#instances.values()) {
      const spec = instance.card.components.find((c) => c.id === component);
      if (spec !== undefined) return spec;
    }
    throw new FlowfleetError(
      'RT_UNKNOWN_COMPONENT',
      `no loaded card has component '${component}'`,
      {
        details: { component, known: this.componentIds() },
      },
    );
  }

  /**
   * The tensors of the version of `component` new rollouts start on (from the first card that
   * has it: every owner stages the same tensors). @throws FlowfleetError RT_UNKNOWN_COMPONENT
   */
  currentTensors(component: string): ReadonlyMap<string, TensorData> {
    for (const instance of this.#instances.values()) {
      if (instance.componentIds.includes(component)) {
        return instance.currentWeights(component).tensors;
      }
    }
    this.spec(component);
    return new Map();
  }

  /**
   * Stages `version` of `component` on every instance that has it (new rollouts use it; the
   * superseded version's graphs are evicted when its last rollout ends).
   * @throws FlowfleetError RT_UNKNOWN_COMPONENT, RT_WEIGHTS_VERSION_EXISTS, RT_INSTANCE_CLOSED
   */
  async setWeightsVersion(
    component: string,
    version: number,
    sha256: string,
    tensors: ReadonlyMap<string, TensorData>,
  ): Promise<number> {
    // Returns how many captured graphs the swap evicted at once (graphs of a version still pinned
    // by a running rollout go when that rollout ends, and are not counted here).
    let evicted = 0;
    const owners = [...this.#instances.values()].filter((i) => i.componentIds.includes(component));
    if (owners.length === 0) this.shapes(component);
    for (const instance of owners) {
      // One id per instance: a component's release of its weights must not drop another's.
      const weights: WeightSet = {
        id: `${this.#weightIdPrefix}/${instance.card.id}/${component}@${version}#${sha256.slice(0, 16)}`,
        tensors,
      };
      const before = instance.capturer.stats().evictions;
      await instance.setWeightsVersion(component, version, weights);
      evicted += instance.capturer.stats().evictions - before;
    }
    return evicted;
  }

  /** Closes every instance (graphs, sessions, cached weights); idempotent, every one runs. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const results = await Promise.allSettled(
        [...this.#instances.values()].map((instance) => instance.close()),
      );
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
    })();
    return this.#closed;
  }
}
