// The ort backend (cpu, cuda and webgpu cells) through the shared component conformance suite,
// with wan21-mini's dit and text encoder as the cases and the card's TS reference as the oracle.
import {
  createOrtComponentBuilder,
  declareOrtCells,
  OrtSessions,
  type OrtCellProvider,
  type OrtComponentBuilder,
} from '@flowfleet/backends';
import {
  componentConformanceChecks,
  runComponentConformance,
  type ComponentConformanceCase,
} from './suite/index.js';
import { initWeights, tokenize, wan21MiniCard } from '@flowfleet/models/wan21';
import { gaussianNoise } from '@flowfleet/numerics';
import {
  ComputePool,
  type ComponentForward,
  type ComponentSpec,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import { createComponentRegistry, registerComponent } from '@flowfleet/registry';
import { afterAll, describe, expect, it } from 'vitest';

const card = wan21MiniCard;
const config = card.config;
const components = createComponentRegistry();
// The cells are declared, and their availability read, at collection time (the suite enumerates
// them), so the providers are probed first: a provider that works here (cpu; webgpu where a
// WebGPU adapter exists, as in CI's lavapipe) is held to the whole suite, the others must say why.
const pool = await ComputePool.create({ threads: 1 });
const sessions = await OrtSessions.attach(pool, { intraOpThreads: 1 });
await sessions.probeAll();
afterAll(async () => {
  await pool.close();
});
const builders = new Map<OrtCellProvider, OrtComponentBuilder>();
declareOrtCells({
  registries: { components },
  kinds: card.components.map((c) => c.kind),
  builderFor: (provider: OrtCellProvider) => (spec, instance) => {
    let builder = builders.get(provider);
    if (builder === undefined) {
      builder = createOrtComponentBuilder({ provider, sessions });
      builders.set(provider, builder);
    }
    return builder(spec, instance);
  },
  cachedProbe: (provider) => sessions.cachedProbe(provider),
});
const buildContext = () => ({ pool });

const specOf = (kind: string) => {
  const spec = card.components.find((c) => c.kind === kind);
  if (spec === undefined) throw new Error(`no ${kind} in ${card.id}`);
  return spec;
};

function ditInputs(seed: number): TensorMap {
  const dims = [2, config.inChannels, 1, 8, 8];
  return {
    latent: {
      dtype: 'float32',
      dims,
      data: gaussianNoise(
        seed,
        0,
        dims.reduce((a, b) => a * b),
      ),
    },
    timestep: { dtype: 'float32', dims: [2], data: Float32Array.from([900 - seed, 250 + seed]) },
    context: {
      dtype: 'float32',
      dims: [2, config.textLen, config.textDim],
      data: gaussianNoise(seed, 1, 2 * config.textLen * config.textDim),
    },
  };
}

function tokenInputs(prompts: string[]): TensorMap {
  const ids = tokenize(prompts, config);
  return {
    tokens: {
      dtype: 'int64',
      dims: [prompts.length, config.textLen],
      data: BigInt64Array.from(ids, (v) => BigInt(v)),
    },
  };
}

const cases = (): ComponentConformanceCase[] => [
  {
    spec: specOf('dit'),
    weights: { id: 'dit@conformance', tensors: initWeights(config, 5, 'dit') },
    inputs: [ditInputs(1), ditInputs(2)],
    output: 'velocity',
  },
  {
    spec: specOf('text_encoder'),
    weights: { id: 'te@conformance', tensors: initWeights(config, 5, 'text_encoder') },
    inputs: [tokenInputs(['a red ball', 'a cat']), tokenInputs(['snow', 'a slow river at dusk'])],
    output: 'context',
  },
];

for (const provider of ['cpu', 'cuda', 'webgpu'] as const) {
  describe(`ort-${provider} component conformance`, () => {
    runComponentConformance(`ort-${provider}`, cases, { components, buildContext });
  });
}

describe('the component conformance suite itself', () => {
  it('fails a backend that drifts past its stated tolerance', async () => {
    const registry = createComponentRegistry();
    registerComponent(
      {
        kind: 'dit',
        device: 'cpu',
        source: 'drifting',
        meta: { parityRtol: 1e-6, parityAtol: 1e-6 },
        build: (async (spec: ComponentSpec) => {
          const inner = (await spec.factory(spec, undefined, { pool })) as ComponentForward;
          return {
            ...inner,
            source: 'drifting',
            run: async (inputs: TensorMap, weights: WeightSet) => {
              const out = await inner.run(inputs, weights);
              const v = out['velocity']!.data as Float32Array;
              return { velocity: { ...out['velocity']!, data: v.map((x) => x + 1e-3) } };
            },
            dispose: () => inner.dispose(),
          };
        }) as never,
      },
      registry,
    );
    const [check] = componentConformanceChecks('drifting', cases().slice(0, 1), {
      components: registry,
      buildContext,
    });
    await expect(check!.run()).rejects.toThrow(/exceed rtol 0.000001/);
  }, 60_000);
});
