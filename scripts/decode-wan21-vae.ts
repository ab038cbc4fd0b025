// The fleet side of the PyTorch VAE parity tests (python/tests/torch/test_vae_parity.py) and the
// quick decode timing: runs a job of tasks on the Wan2.1 VAE decoder component through the
// worker's own stack — a checkpoint in either published layout bound by the card's key maps
// (bindCheckpoint) and widened to float32, the component built on the ort-cpu backend (real
// onnxruntime-node sessions in the compute pool), a clip decoded one latent frame per forward
// (VaeClipDecode) — and writes the frames as safetensors.
//
//   npx tsx --conditions=@flowfleet/source scripts/decode-wan21-vae.ts job.json
//
// job.json: { "config": "wan2.1-vae" | "wan2.1-vae-mini" | { ...WanVaeConfig }, "threads"?: n,
//             "tasks": [task, ...] }
//   { "op": "shapes", "config"? }                 → every parameter (Wan name, diffusers name, dims)
//                                                    of the job's config (or of the named one)
//   { "op": "init", "seed", "out" }               → the component's initWeights(seed) (F32, Wan names)
//   { "op": "bind", "checkpoint" }                → the card's key maps on a checkpoint: ok or the coded error
//   { "op": "decode", "checkpoint", "latent", "out", "captured"? }
//       latent: a safetensors file with `latent` [B, z, T, h, w]; out: `frames` [B, 3, 1 + 4(T − 1), 8h, 8w];
//       captured: run a captured session (weights baked, dims fixed) instead of the eager one
// Prints one JSON line: the config, the ort cells' stated parity tolerance (ORT_PARITY_TOLERANCE)
// and the result of every task (decode: the backend and each step's milliseconds). Exit codes: 0
// done (a failed bind is a result), 1 anything else.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  declareOrtCells,
  ORT_PARITY_TOLERANCE,
  ortCellWiring,
  OrtSessions,
} from '@flowfleet/backends';
import { isFlowfleetError } from '@flowfleet/errors';
import { readSafetensors, writeSafetensors } from '@flowfleet/formats';
import {
  bindCheckpoint,
  decodeWeights,
  encodeWeights,
  type ModelComponentSpec,
} from '@flowfleet/models';
import {
  createVaeDecoderComponent,
  validateWanVaeConfig,
  VaeClipDecode,
  vaeDecoderParameters,
  WAN21_VAE,
  WAN21_VAE_MINI,
  type WanVaeConfig,
} from '@flowfleet/models/wan21';
import {
  ComputePool,
  createPlatform,
  type ComponentForward,
  type TensorData,
  type WeightSet,
} from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';

type Task =
  | { op: 'shapes'; config?: string }
  | { op: 'init'; seed: number; out: string }
  | { op: 'bind'; checkpoint: string }
  | { op: 'decode'; checkpoint: string; latent: string; out: string; captured?: boolean };
interface Job {
  readonly config: string | WanVaeConfig;
  readonly threads?: number;
  readonly tasks: readonly Task[];
}

const CONFIGS: Readonly<Record<string, WanVaeConfig>> = {
  [WAN21_VAE.name]: WAN21_VAE,
  [WAN21_VAE_MINI.name]: WAN21_VAE_MINI,
};

function configOf(config: Job['config']): WanVaeConfig {
  if (typeof config !== 'string') return validateWanVaeConfig(config);
  const known = CONFIGS[config];
  if (known === undefined) throw new Error(`unknown VAE config ${config}`);
  return known;
}

/** A checkpoint as a worker binds a synced one: keys mapped by the card, tensors widened to float32. */
function loadCheckpoint(spec: ModelComponentSpec, path: string): WeightSet {
  const bytes = readFileSync(path);
  const entries = new Map(
    [...readSafetensors(bytes).tensors].map(([key, t]) => [
      key,
      { dtype: t.dtype, shape: t.shape },
    ]),
  );
  const bound = bindCheckpoint(spec, entries);
  const all = decodeWeights(bytes).tensors;
  return {
    id: `${path}@1`,
    tensors: new Map([...bound].map(([name, key]) => [name, all.get(key)!])),
  };
}

async function decode(
  spec: ModelComponentSpec,
  config: WanVaeConfig,
  component: ComponentForward,
  task: Extract<Task, { op: 'decode' }>,
): Promise<Record<string, unknown>> {
  const weights = loadCheckpoint(spec, task.checkpoint);
  const latent = decodeWeights(readFileSync(task.latent)).tensors.get('latent');
  if (latent === undefined) throw new Error(`${task.latent} has no latent`);
  const clip = new VaeClipDecode(config, latent);
  let run = (inputs: Record<string, TensorData>) => component.run(inputs, weights);
  let release = async () => {};
  if (task.captured === true) {
    const captured = await component.capture!(
      weights,
      Object.fromEntries(Object.entries(clip.inputs(0)).map(([k, t]) => [k, t.dims])),
    );
    run = (inputs) => captured.run(inputs);
    release = () => captured.dispose();
  }
  const stepMs: number[] = [];
  try {
    for (let i = 0; i < clip.steps; i++) {
      const inputs = clip.inputs(i);
      const started = performance.now();
      const outputs = await run(inputs);
      stepMs.push(performance.now() - started);
      clip.accept(i, outputs);
    }
  } finally {
    await release();
  }
  const frames = clip.frames();
  writeFileSync(
    task.out,
    writeSafetensors(
      new Map([
        ['frames', { dtype: 'F32', shape: frames.dims, data: frames.data as Float32Array }],
      ]),
    ),
  );
  return { ok: true, backend: component.source, frames: frames.dims, stepMs };
}

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
  const config = configOf(job.config);
  const spec = createVaeDecoderComponent(config);
  const compute = await ComputePool.create({ threads: 1 });
  let component: ComponentForward | undefined;
  try {
    const sessions = await OrtSessions.attach(compute, { intraOpThreads: job.threads ?? 1 });
    const components = createComponentRegistry();
    declareOrtCells({ registries: { components }, kinds: [spec.kind], ...ortCellWiring(sessions) });
    const platform = createPlatform({
      facts: { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' },
      kernels: createKernelRegistry(),
      components,
      pool: compute,
    });
    const results: unknown[] = [];
    for (const task of job.tasks) {
      switch (task.op) {
        case 'shapes':
          results.push(vaeDecoderParameters(configOf(task.config ?? config)));
          break;
        case 'init':
          writeFileSync(task.out, encodeWeights(spec.initWeights(task.seed)));
          results.push({ ok: true });
          break;
        case 'bind':
          try {
            results.push({ ok: true, tensors: loadCheckpoint(spec, task.checkpoint).tensors.size });
          } catch (error) {
            if (!isFlowfleetError(error)) throw error;
            results.push({ ok: false, code: error.code, details: error.details });
          }
          break;
        case 'decode':
          component ??= (await platform.buildComponent<unknown, ComponentForward>(spec, spec))
            .component;
          results.push(await decode(spec, config, component, task));
          break;
      }
    }
    process.stdout.write(
      `${JSON.stringify({ config, tolerance: ORT_PARITY_TOLERANCE, results })}\n`,
    );
  } finally {
    await component?.dispose();
    await compute.close();
  }
}

await main();
