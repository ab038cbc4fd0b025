// A second model card, defined only here, of another shape than wan21: an unconditional image
// flow model (no text encoder, no CFG) whose one component, kind `pixel_mlp`, maps each latent
// position's C channels and the timestep to a velocity with a small MLP. It has its own loop,
// parameter shapes, initial weights and request rules, and only a TS-reference forward (the
// platform's terminal rung builds it). Nothing outside `models` and this test tree knows it.
//
// Its latent is [C = 3, F = 1, H, W]: rank 4 like wan21's, because the result reader on this
// branch still requires a 4-tuple (RolloutFile v1 takes any rank).
import {
  DONE,
  arenaBytes,
  eagerIO,
  f32Tensor,
  graphIO,
  invalidRequest,
  resolveSamplingRequest,
  type LoopDone,
  type ModelCard,
  type ModelComponentSpec,
  type ResolvedSamplingRequest,
  type RolloutLoop,
  type RolloutTrajectory,
  type SamplingRequest,
  type StepIO,
  type StepResult,
  type WorkPlan,
} from '@flowfleet/models';
import {
  flowGrpoStdDev,
  gaussianNoise,
  type flowMatchStep,
  type flowSdeStep,
} from '@flowfleet/numerics';
import {
  SOLVER_OP,
  type ComponentForward,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';

/** The card's config: latent channels and the MLP's hidden width. */
export interface PixelFlowConfig {
  readonly channels: number;
  readonly hidden: number;
}

export const PIXEL_FLOW_CONFIG: PixelFlowConfig = Object.freeze({ channels: 3, hidden: 8 });
export const PIXEL_FLOW_KIND = 'pixel_mlp';

/** The velocity MLP's weights, by state_dict name. */
export function pixelFlowShapes(config: PixelFlowConfig): Map<string, number[]> {
  const { channels: C, hidden: H } = config;
  return new Map([
    ['in.weight', [H, C]],
    ['in.bias', [H]],
    ['time.weight', [H]],
    ['out.weight', [C, H]],
    ['out.bias', [C]],
  ]);
}

function pixelFlowWeights(config: PixelFlowConfig, seed: number): Map<string, TensorData> {
  const scales: Record<string, number> = {
    'in.weight': 1 / Math.sqrt(config.channels),
    'in.bias': 0.02,
    'time.weight': 1,
    'out.weight': 1 / Math.sqrt(config.hidden),
    'out.bias': 0.02,
  };
  return new Map(
    [...pixelFlowShapes(config)].map(([name, dims], stream) => {
      const data = gaussianNoise(
        seed,
        0x20000 + stream,
        dims.reduce((a, b) => a * b, 1),
      );
      for (let i = 0; i < data.length; i++) data[i] = scales[name]! * data[i]!;
      return [name, { dtype: 'float32', dims, data }] as const;
    }),
  );
}

/** v = W_out·tanh(W_in·x + b_in + w_t·t/1000) + b_out at every position, in float64. */
export function pixelFlowForward(
  config: PixelFlowConfig,
  weights: ReadonlyMap<string, TensorData>,
  latent: TensorData,
  timestep: TensorData,
): Float32Array {
  const { channels: C, hidden: H } = config;
  const w = (name: string) => weights.get(name)!.data as Float32Array;
  const [wIn, bIn, wT, wOut, bOut] = [
    'in.weight',
    'in.bias',
    'time.weight',
    'out.weight',
    'out.bias',
  ].map(w);
  const x = latent.data as Float32Array;
  const batch = latent.dims[0]!;
  const positions = x.length / (batch * C);
  const v = new Float32Array(x.length);
  const h = new Float64Array(H);
  for (let b = 0; b < batch; b++) {
    const t = (timestep.data as Float32Array)[b]! / 1000;
    for (let p = 0; p < positions; p++) {
      const at = (c: number) => (b * C + c) * positions + p;
      for (let j = 0; j < H; j++) {
        let sum = bIn![j]! + wT![j]! * t;
        for (let c = 0; c < C; c++) sum += wIn![j * C + c]! * x[at(c)]!;
        h[j] = Math.tanh(sum);
      }
      for (let c = 0; c < C; c++) {
        let sum = bOut![c]!;
        for (let j = 0; j < H; j++) sum += wOut![c * H + j]! * h[j]!;
        v[at(c)] = sum;
      }
    }
  }
  return v;
}

function pixelFlowComponent(config: PixelFlowConfig): ComponentForward {
  return {
    kind: PIXEL_FLOW_KIND,
    source: 'test-reference',
    run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
      const latent = inputs['latent']!;
      const velocity = pixelFlowForward(config, weights.tensors, latent, inputs['timestep']!);
      return Promise.resolve({ velocity: f32Tensor(velocity, latent.dims) });
    },
    dispose: () => Promise.resolve(),
  };
}

interface PixelFlowState {
  readonly request: ResolvedSamplingRequest;
  readonly latentDims: readonly number[];
  readonly sampleSize: number;
  readonly trajectory: Float32Array;
  readonly logProbs: Float64Array;
  latents: Float32Array;
  step: number;
}

type StepOut = StepResult & {
  readonly tensors: { readonly sample: Float32Array; readonly log_probs: Float64Array };
};

/** One step: the forward, then the Euler or FlowGRPO SDE kernel per sample. */
async function pixelFlowStep(
  io: StepIO,
  state: Pick<PixelFlowState, 'request' | 'latentDims' | 'sampleSize'>,
  x: Float32Array,
  scalars: Float64Array,
  noise: Float32Array | undefined,
): Promise<StepOut> {
  const { request, sampleSize: size } = state;
  const group = request.seeds.length;
  const timestep = new Float32Array(group).fill(1000 * scalars[0]!);
  const out = await io.forward({
    latent: f32Tensor(x, [group, ...state.latentDims]),
    timestep: f32Tensor(timestep, [group]),
  });
  const v = out['velocity']!.data as Float32Array;
  const sample = io.f32('sample', group * size);
  const logProbs = io.f64('log_probs', group);
  for (let g = 0; g < group; g++) {
    const [lo, hi] = [g * size, (g + 1) * size];
    const part = { x: x.subarray(lo, hi), v: v.subarray(lo, hi) };
    const [sigma, sigmaNext, stdDevT] = [scalars[0]!, scalars[1]!, scalars[2]!];
    if (noise === undefined) {
      const euler = io.kernel<typeof flowMatchStep>(SOLVER_OP.euler);
      sample.set(euler(part.x, part.v, sigma, sigmaNext), lo);
      logProbs[g] = 0;
    } else {
      const sde = io.kernel<typeof flowSdeStep>(SOLVER_OP.sde);
      const step = sde({ ...part, sigma, sigmaNext, stdDevT, noise: noise.subarray(lo, hi) });
      sample.set(step.sample, lo);
      logProbs[g] = step.logProb;
    }
  }
  return { tensors: { sample: sample.slice(), log_probs: logProbs.slice() } };
}

/** The card's own loop: T denoise steps, no encode step, no CFG; capturable. */
function createPixelFlowLoop(config: PixelFlowConfig): RolloutLoop {
  const loop = {
    loopId: 'pixel_flow',
    init(request: ResolvedSamplingRequest): PixelFlowState {
      const latentDims = [config.channels, 1, request.shape.height, request.shape.width];
      const sampleSize = latentDims.reduce((a, b) => a * b, 1);
      const group = request.seeds.length;
      const latents = new Float32Array(group * sampleSize);
      request.seeds.forEach((seed, g) =>
        gaussianNoise(seed, 0, sampleSize, latents.subarray(g * sampleSize, (g + 1) * sampleSize)),
      );
      const trajectory = new Float32Array((request.steps + 1) * latents.length);
      trajectory.set(latents);
      const logProbs = new Float64Array(request.steps * group);
      return { request, latentDims, sampleSize, trajectory, logProbs, latents, step: 0 };
    },
    next(state: PixelFlowState): WorkPlan<StepOut> | LoopDone {
      const { request, sampleSize: size } = state;
      if (state.step >= request.steps) return DONE;
      const i = state.step;
      const group = request.seeds.length;
      const sde = request.sampler === 'sde';
      const stdDevT = sde ? flowGrpoStdDev(request.sigmas, i, request.noiseLevel) : 0;
      const scalars = Float64Array.of(request.sigmas[i]!, request.sigmas[i + 1]!, stdDevT);
      const noise = sde ? new Float32Array(group * size) : undefined;
      request.seeds.forEach((seed, g) => {
        if (noise) gaussianNoise(seed, 1 + i, size, noise.subarray(g * size, (g + 1) * size));
      });
      const dims = [group, ...state.latentDims];
      const x = state.latents;
      return {
        step: { loopId: 'pixel_flow', kind: 'denoise', index: i },
        components: ['velocity'],
        shapeSig: {
          kind: 'pixel_denoise',
          dims: { latent: dims },
          dtype: 'float32',
          extra: request.sampler,
        },
        capturable: true,
        graphKey: { sampler: request.sampler },
        workspaceBytes: arenaBytes([
          { itemBytes: 4, length: group * size },
          { itemBytes: 8, length: group },
        ]),
        run: (instance) => pixelFlowStep(eagerIO(instance, 'velocity'), state, x, scalars, noise),
        graphFn: (_instance, workspace) =>
          pixelFlowStep(
            graphIO(workspace, 'velocity'),
            state,
            workspace.input('x').data as Float32Array,
            workspace.input('scalars').data as Float64Array,
            noise === undefined ? undefined : (workspace.input('noise').data as Float32Array),
          ),
        graphInputs: {
          x: { dtype: 'float32', dims, data: x },
          scalars: { dtype: 'float64', dims: [3], data: scalars },
          ...(noise === undefined ? {} : { noise: { dtype: 'float32', dims, data: noise } }),
        },
        graphComponents: { velocity: { latent: dims, timestep: [group] } },
        graphKernels: [sde ? SOLVER_OP.sde : SOLVER_OP.euler],
      };
    },
    advance(state: PixelFlowState, result: StepOut): void {
      const n = state.latents.length;
      state.latents = result.tensors.sample;
      state.trajectory.set(result.tensors.sample, (state.step + 1) * n);
      state.logProbs.set(result.tensors.log_probs, state.step * state.request.seeds.length);
      state.step++;
    },
    finalize(state: PixelFlowState): RolloutTrajectory {
      const { request } = state;
      return {
        group: request.seeds.length,
        latentDims: state.latentDims,
        latents: state.trajectory,
        logProbs: state.logProbs,
        sigmas: request.sigmas,
        timesteps: Float64Array.from(request.sigmas.subarray(0, request.steps), (s) => 1000 * s),
        stepIndices: Int32Array.from({ length: request.steps }, (_, i) => i),
      };
    },
  };
  return loop as RolloutLoop;
}

/**
 * The card's request rules: the shared flow-matching rules, then an image latent (one frame) and
 * no guidance (there is no conditioning to guide by). Any height and width: no patch.
 */
function resolvePixelFlowRequest(
  card: Pick<ModelCard, 'sampling' | 'latent'>,
  request: SamplingRequest,
): ResolvedSamplingRequest {
  const resolved = resolveSamplingRequest(card, request);
  if (resolved.shape.frames !== 1) {
    throw invalidRequest(
      'shape.frames',
      'an image card has exactly one frame',
      resolved.shape.frames,
    );
  }
  if (resolved.guidanceScale !== 1) {
    throw invalidRequest(
      'guidanceScale',
      'an unconditional card has no guidance (use 1)',
      resolved.guidanceScale,
    );
  }
  return resolved;
}

/** The pixel-flow card with `id` and `config`. */
export function createPixelFlowCard(
  id = 'pixel-flow-mini',
  config: PixelFlowConfig = PIXEL_FLOW_CONFIG,
): ModelCard<PixelFlowConfig> {
  const velocity: ModelComponentSpec = {
    id: 'velocity',
    kind: PIXEL_FLOW_KIND,
    factory: () => pixelFlowComponent(config),
    forwardInputDims: (batch, latent) => ({
      latent: [batch, config.channels, latent.frames, latent.height, latent.width],
      timestep: [batch],
    }),
    latentSized: true,
    parameterShapes: () => pixelFlowShapes(config),
    initWeights: (seed) => pixelFlowWeights(config, seed),
  };
  const card: ModelCard<PixelFlowConfig> = {
    id,
    config,
    components: [velocity],
    loops: [
      {
        loopId: 'pixel_flow',
        graphCapture: 'breakable',
        sharedWeightComponents: ['velocity'],
        create: () => createPixelFlowLoop(config),
      },
    ],
    sampling: { steps: 4, shift: 1, guidanceScale: 1, noiseLevel: 0.7, sampler: 'sde' },
    latent: { frames: 1, height: 8, width: 8 },
    loadByDefault: true,
    resolveRequest: (request) => resolvePixelFlowRequest(card, request),
    requiredOps: (request) => [request.sampler === 'ode' ? SOLVER_OP.euler : SOLVER_OP.sde],
  };
  return card;
}
