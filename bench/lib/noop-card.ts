// A model card whose forwards are trivial (zeros of the right shape, at once, on the calling
// thread): what is left of a rollout is the fleet's own overhead — queue, validation, runtime
// loop, progress, result upload. `config` still sets the weight shapes, so a weight sync to a
// worker serving it moves real bytes.
import { type ModelCard } from '@flowfleet/models';
import { createWan21Card, type Wan21Config } from '@flowfleet/models/wan21';
import type { ComponentForward, TensorData, TensorMap } from '@flowfleet/platform';

/** Called on the forward's thread before it returns (a bench timestamps job starts here). */
export type ForwardListener = (kind: 'dit' | 'text_encoder', inputs: TensorMap) => void;

/** How to build a no-op card. */
export interface NoopCardOptions {
  readonly id: string;
  readonly config: Wan21Config;
  readonly onForward?: ForwardListener;
  /**
   * Every worker built from this card shares one copy of each component's initial weights
   * (version 0), so dozens of in-process workers of a big config fit in memory (bench:sync).
   */
  readonly shareInitialWeights?: boolean;
}

function input(inputs: TensorMap, name: string): TensorData {
  const tensor = inputs[name];
  if (tensor === undefined) throw new Error(`no-op forward: missing input '${name}'`);
  return tensor;
}

function noopForward(
  kind: 'dit' | 'text_encoder',
  config: Wan21Config,
  onForward: ForwardListener | undefined,
): ComponentForward {
  return {
    kind,
    source: 'bench-noop',
    run(inputs: TensorMap): Promise<Record<string, TensorData>> {
      onForward?.(kind, inputs);
      if (kind === 'dit') {
        const latent = input(inputs, 'latent');
        const velocity = new Float32Array(latent.data.length);
        return Promise.resolve({
          velocity: { dtype: 'float32', dims: latent.dims, data: velocity },
        });
      }
      const batch = input(inputs, 'tokens').dims[0] ?? 1;
      const dims = [batch, config.textLen, config.textDim];
      const context = new Float32Array(batch * config.textLen * config.textDim);
      return Promise.resolve({ context: { dtype: 'float32', dims, data: context } });
    },
    dispose: () => Promise.resolve(),
  };
}

/** A card with the wan21 structure (dit + text_encoder, the denoise loop) and no-op forwards. */
export function noopCard({
  id,
  config,
  onForward,
  shareInitialWeights = false,
}: NoopCardOptions): ModelCard<Wan21Config> {
  const card = createWan21Card({
    id,
    config,
    factories: {
      dit: () => noopForward('dit', config, onForward),
      text_encoder: () => noopForward('text_encoder', config, onForward),
    },
    onnx: false,
    // Eager: the no-op components cannot capture, so a breakable loop would only count breaks.
    graphCapture: 'eager',
    sampling: { steps: 1, shift: 3, guidanceScale: 4.5, noiseLevel: 0.7, sampler: 'sde' },
    latent: { frames: 1, height: 2, width: 2 },
  });
  if (!shareInitialWeights) return card;
  return {
    ...card,
    components: card.components.map((component) => {
      const kept = new Map<number, Map<string, TensorData>>();
      return {
        ...component,
        initWeights(seed: number) {
          let weights = kept.get(seed);
          if (weights === undefined) kept.set(seed, (weights = component.initWeights(seed)));
          return weights;
        },
      };
    }),
  };
}
