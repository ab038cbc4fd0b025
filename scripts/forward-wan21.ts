// The fleet side of the PyTorch wan21 parity tests (python/tests/torch/): runs a job of tasks on a
// wan21 card through the worker's own stack — weights decoded and checked as a synced blob is,
// components built on the ort-cpu backend (real onnxruntime-node sessions), rollouts driven by the
// runtime's runRollout — and writes the outputs as safetensors.
//
//   npx tsx --conditions=@flowfleet/source scripts/forward-wan21.ts job.json
//
// job.json: { "config": "wan21-mini" | { ...Wan21Config overrides }, "tasks": [task, ...] }
//   { "op": "shapes" }                                   → every parameter name and dims per component
//   { "op": "init", "component", "seed", "out" }        → the card's initWeights(seed) as safetensors
//   { "op": "check", "component", "weights" }           → the fleet's weight check on a file
//   { "op": "forward", "dit", "textEncoder", "inputs", "out" }
//       inputs: `tokens` [P, L] (→ `context`) and/or `latent`, `timestep`, `context` (→ `velocity`)
//   { "op": "rollout", "dit", "textEncoder", "request", "out" }
//       request: a SamplingRequest; out: `context` (the encode step's), `latents` [T+1, G, …],
//       `velocity` [T, G, …] (after CFG), `timesteps`, `sigmas`, `log_probs`
// Prints one JSON line: the card's config, the ort cells' stated parity tolerance
// (ORT_PARITY_TOLERANCE) and the result of every task. Exit codes: 0 done (a failed check is a result),
// 1 anything else.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  declareOrtCells,
  ORT_PARITY_TOLERANCE,
  ortCellWiring,
  OrtSessions,
  registerCpuBackend,
} from '@flowfleet/backends';
import { isFlowfleetError } from '@flowfleet/errors';
import { writeSafetensors, type SafetensorsTensor } from '@flowfleet/formats';
import {
  checkWeightsAgainstConfig,
  decodeWeights,
  DEFAULT_CARD_REGISTRY,
  encodeWeights,
  type ModelCard,
  type SamplingRequest,
} from '@flowfleet/models';
import { createWan21Card, createWan21Config, type Wan21Config } from '@flowfleet/models/wan21';
import {
  ComputePool,
  createPlatform,
  type Platform,
  type TensorData,
  type TensorMap,
} from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { ModelInstance, runRollout, type StepObserver } from '@flowfleet/runtime';

type Component = 'dit' | 'text_encoder';
type Task =
  | { op: 'shapes' }
  | { op: 'init'; component: Component; seed: number; out: string }
  | { op: 'check'; component: Component; weights: string }
  | { op: 'forward'; dit: string; textEncoder: string; inputs: string; out: string }
  | { op: 'rollout'; dit: string; textEncoder: string; request: SamplingRequest; out: string };
interface Job {
  readonly config: string | Partial<Wan21Config>;
  readonly tasks: readonly Task[];
}

function cardOf(config: Job['config']): ModelCard<Wan21Config> {
  if (typeof config === 'string')
    return DEFAULT_CARD_REGISTRY.get(config) as ModelCard<Wan21Config>;
  return createWan21Card({ id: 'custom', config: createWan21Config(config) });
}

function shapesOf(card: ModelCard, component: Component): ReadonlyMap<string, readonly number[]> {
  const spec = card.components.find((c) => c.id === component);
  if (spec === undefined) throw new Error(`card ${card.id} has no ${component}`);
  return spec.parameterShapes();
}

/** A weights file as a worker takes a synced blob: decoded (F16/BF16 widened) and checked. */
function loadChecked(card: ModelCard, component: Component, path: string): Map<string, TensorData> {
  const { tensors } = decodeWeights(readFileSync(path));
  checkWeightsAgainstConfig(tensors, shapesOf(card, component));
  return tensors;
}

const f32 = (data: Float32Array, shape: readonly number[]): SafetensorsTensor => ({
  dtype: 'F32',
  shape,
  data,
});
const f64 = (data: Float64Array, shape: readonly number[]): SafetensorsTensor => ({
  dtype: 'F64',
  shape,
  data,
});

function floatOutput(out: Record<string, TensorData>, name: string): SafetensorsTensor {
  const t = out[name];
  if (t === undefined || !(t.data instanceof Float32Array)) throw new Error(`no float32 ${name}`);
  return f32(t.data, t.dims);
}

async function instanceFor(
  card: ModelCard,
  platform: Platform,
  task: { dit: string; textEncoder: string },
): Promise<ModelInstance> {
  const weights = {
    dit: {
      version: 1,
      weights: { id: `${task.dit}@1`, tensors: loadChecked(card, 'dit', task.dit) },
    },
    text_encoder: {
      version: 1,
      weights: {
        id: `${task.textEncoder}@1`,
        tensors: loadChecked(card, 'text_encoder', task.textEncoder),
      },
    },
  };
  const instance = await ModelInstance.create({ card, platform, weights });
  for (const id of instance.componentIds) {
    if (instance.componentSource(id) !== 'ort-cpu') {
      await instance.close();
      throw new Error(`${id} was built on ${instance.componentSource(id)}, not ort-cpu`);
    }
  }
  return instance;
}

async function forward(
  instance: ModelInstance,
  inputsPath: string,
): Promise<Map<string, SafetensorsTensor>> {
  // Inputs decode as weights do: F32 → float32, I64 → int64, I32 → int32.
  const inputs = decodeWeights(readFileSync(inputsPath)).tensors;
  const lease = instance.acquireWeights();
  const outputs = new Map<string, SafetensorsTensor>();
  try {
    const tokens = inputs.get('tokens');
    if (tokens !== undefined) {
      const feed: TensorMap = { tokens };
      const out = await instance.component('text_encoder').run(feed, lease.weights('text_encoder'));
      outputs.set('context', floatOutput(out, 'context'));
    }
    if (inputs.has('latent')) {
      const input = (name: string): TensorData => {
        const t = inputs.get(name);
        if (t === undefined) throw new Error(`the dit forward needs ${name}`);
        return t;
      };
      const feed: TensorMap = {
        latent: input('latent'),
        timestep: input('timestep'),
        context: input('context'),
      };
      const out = await instance.component('dit').run(feed, lease.weights('dit'));
      outputs.set('velocity', floatOutput(out, 'velocity'));
    }
  } finally {
    await lease.release();
  }
  return outputs;
}

async function rollout(
  instance: ModelInstance,
  request: SamplingRequest,
): Promise<{ tensors: Map<string, SafetensorsTensor>; info: Record<string, unknown> }> {
  let context: Float32Array | undefined;
  const velocities: Float32Array[] = [];
  const observer: StepObserver = {
    name: 'forward-wan21',
    onStep(step, result) {
      const tensors = result.tensors as Record<string, Float32Array>;
      if (step.kind === 'encode') context = tensors['context']!.slice();
      else velocities.push(tensors['velocity']!.slice());
    },
  };
  const result = await runRollout(instance, { ...request, observers: [observer] });
  const { record } = result;
  const { group, latentDims, steps } = record.metadata;
  const sample = [group, ...latentDims];
  const velocity = new Float32Array(velocities.reduce((n, v) => n + v.length, 0));
  velocities.forEach((v, i) => velocity.set(v, i * v.length));
  const config = instance.card.config as Wan21Config;
  if (context === undefined) throw new Error('the rollout ran no encode step');
  const prompts = context.length / (config.textLen * config.textDim);
  const tensors = new Map<string, SafetensorsTensor>([
    ['context', f32(context, [prompts, config.textLen, config.textDim])],
    ['latents', f32(record.latents, [steps + 1, ...sample])],
    ['velocity', f32(velocity, [steps, ...sample])],
    ['timesteps', f64(record.timesteps, [steps])],
    ['sigmas', f64(record.sigmas, [steps + 1])],
  ]);
  if (record.logProbs !== null) tensors.set('log_probs', f64(record.logProbs, [steps, group]));
  return {
    tensors,
    info: { backend: record.metadata.backend, captureStats: result.captureStats },
  };
}

async function runTask(card: ModelCard, platform: Platform, task: Task): Promise<unknown> {
  switch (task.op) {
    case 'shapes':
      return Object.fromEntries(
        (['dit', 'text_encoder'] as const).map((c) => [c, [...shapesOf(card, c)]]),
      );
    case 'init': {
      const spec = card.components.find((c) => c.id === task.component)!;
      writeFileSync(task.out, encodeWeights(spec.initWeights(task.seed)));
      return { ok: true };
    }
    case 'check':
      try {
        loadChecked(card, task.component, task.weights);
        return { ok: true };
      } catch (error) {
        if (!isFlowfleetError(error)) throw error;
        return { ok: false, code: error.code, details: error.details };
      }
    case 'forward':
    case 'rollout': {
      const instance = await instanceFor(card, platform, task);
      try {
        if (task.op === 'forward') {
          const outputs = await forward(instance, task.inputs);
          writeFileSync(task.out, writeSafetensors(outputs));
          return { ok: true };
        }
        const { tensors, info } = await rollout(instance, task.request);
        writeFileSync(task.out, writeSafetensors(tensors));
        return { ok: true, ...info };
      } finally {
        await instance.close();
      }
    }
  }
}

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
  const card = cardOf(job.config);
  const compute = await ComputePool.create({ threads: 1 });
  try {
    const sessions = await OrtSessions.attach(compute, { intraOpThreads: 1 });
    const components = createComponentRegistry();
    declareOrtCells({
      registries: { components },
      kinds: ['dit', 'text_encoder'],
      ...ortCellWiring(sessions),
    });
    const kernels = createKernelRegistry();
    registerCpuBackend({ kernels });
    const platform = createPlatform({
      facts: { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' },
      kernels,
      components,
      pool: compute,
    });
    const results: unknown[] = [];
    for (const task of job.tasks) results.push(await runTask(card, platform, task));
    process.stdout.write(
      `${JSON.stringify({ config: card.config, tolerance: ORT_PARITY_TOLERANCE, results })}\n`,
    );
  } finally {
    await compute.close();
  }
}

await main();
