// bench:real — the Wan2.1-T2V-1.3B DiT at its real size (1,418,996,800 parameters) on one CPU
// worker. Run it alone: `flock /tmp/ffbench.lock npm run bench:real` (a worker holds ~12 GB).
// Stages (BENCH_REAL_STAGES, default all; run as checkpoint, fleet, form, raw), each writing
// bench/results/real.json:
//   checkpoint  write the diffusers-layout bf16 checkpoint (2.8 GB) into BENCH_REAL_DIR, unless
//               there; BENCH_REAL_WAN=1 also writes (and loads) Wan's own f32 layout (5.7 GB)
//   form        the ONNX form decision (ADR 015) at 8 of the 30 blocks (1.59 GB, under the 2 GB
//               protobuf limit): eager (weights as inputs) vs captured (initializers) session —
//               create time, RSS growth, forward time, outputs compared
//   fleet       one in-process worker (ort-cpu) of a coordinator on a real Redis: start-up (version
//               0 weights), a full sync of the bf16 checkpoint timed to the ack, G = 4 rollouts of
//               4 SDE steps with CFG 4.5 on it (enqueue → completed), a rank-32 LoRA sync on it
//               timed to the ack; peak RSS of each
//   vae         the card's VAE decoder (WAN21_VAE, random weights) on the worker's path — the ort
//               component builder on a compute pool, driven by the card's frameDecoder: ms per
//               latent frame (one forward each) for one sample at the bench's latent 16×3×8×8 and
//               for one 240×416×33 clip (16×9×30×52; BENCH_REAL_VAE_BIG=0 skips it, ~20 min),
//               peak RSS; the fleet stage measures the decode's share of a rollout
//   raw         the same forwards in a raw onnxruntime loop (bench/rollout-raw-loop.ts) on the
//               same eager graph and session settings, weights loaded from the checkpoint
//               (loadCheckpoint: load time, RSS); then one forward of a 240×416×33 video's latent
//               (16×9×30×52)
// The card is `wan2.1-t2v-1.3b` (version 0 zeros, see fleetCard): text embeddings by reference —
// a prompt's [24, 4096] and the empty negative prompt's [1, 4096] (bf16 blobs, random values
// standing in for umT5-XXL's), zero-padded to 512 rows by the card. Each rollout = 4 CFG-batched
// DiT forwards (batch 8, latent 16×3×8×8, context 512×4096); the raw loop gets the same padded
// embeddings as its context.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowfleetClient } from '@flowfleet/client';
import { createCoordinator } from '@flowfleet/coordinator';
import {
  bfloat16ToFloat32,
  float32ToBfloat16,
  writeSafetensors,
  type SafetensorsTensor,
} from '@flowfleet/formats';
import { createCardRegistry, loadCheckpoint } from '@flowfleet/models';
import {
  WAN21_1_3B,
  createWan21Card,
  wan21T2v13bCard,
  createWan21Config,
  initVaeDecoderWeights,
  initWeights,
  WAN21_VAE,
  writeWan21DitCheckpoint,
} from '@flowfleet/models/wan21';
import { gaussianNoise } from '@flowfleet/numerics';
import {
  ComputePool,
  sharedFloat32Array,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import { resolveLimits } from '@flowfleet/protocol';
import { createWorker, type FlowfleetWorker } from '@flowfleet/worker';
import { round } from './lib/bench-report.js';
import { BENCH_TOKENS, benchPrefix, deletePrefix } from './lib/bench-fleet.js';
import { openRawEagerForward } from './lib/raw-eager-forward.js';
import { startBenchRedis } from './lib/redis-server.js';
import { RssSampler, rssMb } from './lib/rss-sampler.js';
import { runBench } from './lib/teardown.js';
import { rawRollout, type RawWorkload } from './rollout-raw-loop.js';

const DIR = process.env['BENCH_REAL_DIR'] ?? join(tmpdir(), 'flowfleet-real');
const STAGES = (process.env['BENCH_REAL_STAGES'] ?? 'checkpoint,form,fleet,vae,raw').split(',');
const ROUNDS = Number(process.env['BENCH_REAL_ROUNDS'] ?? 1);
const INTRA_OP = Math.min(2, cpus().length);
const SEEDS = [101, 102, 103, 104];
const STEPS = 4;
const GUIDANCE = 4.5;
const NOISE_LEVEL = 0.7;
const SHIFT = 3;
const SHAPE = Object.freeze({ frames: 3, height: 8, width: 8 });
const BIG_SHAPE = Object.freeze({ frames: 9, height: 30, width: 52 });
const PROMPT = 'a red fox running through fresh snow';
const LORA_RANK = 32;
const RESULTS = new URL('./results/real.json', import.meta.url);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** BENCH_REAL_LAYERS: fewer blocks of the same DiT, for a quick check of the script itself. */
const CONFIG =
  process.env['BENCH_REAL_LAYERS'] === undefined
    ? WAN21_1_3B
    : createWan21Config({ layers: Number(process.env['BENCH_REAL_LAYERS']) }, WAN21_1_3B);
const card =
  CONFIG === WAN21_1_3B
    ? wan21T2v13bCard
    : createWan21Card({
        id: wan21T2v13bCard.id,
        config: CONFIG,
        textInput: 'embeddings',
        graphCapture: 'eager',
        sampling: wan21T2v13bCard.sampling,
        latent: wan21T2v13bCard.latent,
      });
/**
 * The fleet's card: version 0 of its DiT is zeros, not the card's Philox draw — at 1.4 B values
 * that draw costs minutes of the worker's start-up, and the bench syncs the checkpoint at once.
 */
const fleetCard = {
  ...card,
  components: card.components.map((c) =>
    c.id === 'dit'
      ? {
          ...c,
          initWeights: () =>
            new Map(
              [...c.parameterShapes()].map(([name, dims]) => [
                name,
                {
                  dtype: 'float32',
                  dims: [...dims],
                  // Shared, as every version a worker materialises (untouched pages stay unpaid).
                  data: sharedFloat32Array(dims.reduce((a, b) => a * b, 1)),
                },
              ]),
            ),
        }
      : c,
  ),
} as typeof card;
const ditSpec = card.components.find((c) => c.id === 'dit')!;
const diffusersPath = join(DIR, 'diffusers', 'transformer');
const wanPath = join(DIR, 'wan');

type Results = Record<string, unknown>;
const results: Results = existsSync(RESULTS)
  ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Results)
  : {};

function save(stage: string, figures: unknown): void {
  results['bench'] = 'real';
  results['date'] = new Date().toISOString();
  results['environment'] = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemGb: round(totalmem() / 1e9, 1),
    ortIntraOpThreads: INTRA_OP,
  };
  results['workload'] = {
    parameters: 1_418_996_800,
    group: SEEDS.length,
    steps: STEPS,
    sampler: 'sde',
    guidanceScale: GUIDANCE,
    latent: [16, SHAPE.frames, SHAPE.height, SHAPE.width],
    ditBatch: 2 * SEEDS.length,
    context: [512, 4096],
    rounds: ROUNDS,
  };
  results[stage] = { ...(figures as object), loadavg: loadavg().map((v) => round(v, 2)) };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`[${stage}]`, JSON.stringify(results[stage]));
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: round(performance.now() - started, 1), value };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** Deterministic small values (a stand-in for trained adapter factors). */
function filled(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    out[i] = (state / 2 ** 32 - 0.5) * 0.02;
  }
  return out;
}

/** Token counts of the prompt's and the empty negative prompt's embeddings (umT5: "" is EOS). */
const EMBED_TOKENS = { prompt: 24, negative: 1 } as const;

/** One embedding's values on the bf16 grid (what the blob holds), seed-deterministic. */
function embeddingValues(tokens: number, seed: number): Float32Array {
  return bfloat16ToFloat32(
    float32ToBfloat16(filled(tokens * CONFIG.textDim, seed).map((v) => v * 10)),
  );
}

/** The embedding as the blob a client uploads: `[tokens, 4096]` BF16. */
function embeddingBlob(tokens: number, seed: number): Uint8Array {
  return writeSafetensors({
    prompt_embeds: {
      dtype: 'BF16',
      shape: [tokens, CONFIG.textDim],
      data: float32ToBfloat16(embeddingValues(tokens, seed)),
    },
  });
}

/** flow_grpo's Wan2.1 LoRA (r 32, alpha 64) on every attention projection, in PEFT's names. */
function writeLoraAdapter(dir: string): number {
  const dim = WAN21_1_3B.dim;
  const adapter = new Map<string, SafetensorsTensor>();
  let layers = 0;
  for (let block = 0; block < CONFIG.layers; block++) {
    for (const attn of ['attn1', 'attn2']) {
      for (const proj of ['to_q', 'to_k', 'to_v', 'to_out.0']) {
        const key = `base_model.model.blocks.${block}.${attn}.${proj}`;
        const seed = 2 * layers + 7;
        adapter.set(`${key}.lora_A.weight`, {
          dtype: 'BF16',
          shape: [LORA_RANK, dim],
          data: new Uint16Array(filled(LORA_RANK * dim, seed).buffer).filter((_, i) => i % 2 === 1),
        });
        adapter.set(`${key}.lora_B.weight`, {
          dtype: 'BF16',
          shape: [dim, LORA_RANK],
          data: new Uint16Array(filled(dim * LORA_RANK, seed + 1).buffer).filter(
            (_, i) => i % 2 === 1,
          ),
        });
        layers += 1;
      }
    }
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'adapter_model.safetensors'), writeSafetensors(adapter));
  writeFileSync(
    join(dir, 'adapter_config.json'),
    JSON.stringify({
      r: LORA_RANK,
      lora_alpha: 64,
      target_modules: ['to_q', 'to_k', 'to_v', 'to_out.0'],
      use_rslora: false,
    }),
  );
  return layers;
}

async function checkpointStage(): Promise<void> {
  const figures: Record<string, unknown> = {};
  if (!existsSync(join(diffusersPath, 'diffusion_pytorch_model.safetensors.index.json'))) {
    const sampler = RssSampler.start();
    const { ms, value } = await timed(() =>
      writeWan21DitCheckpoint({
        config: CONFIG,
        layout: 'diffusers',
        dir: join(DIR, 'diffusers'),
      }),
    );
    figures['diffusersWrite'] = {
      ms,
      files: value.files.length,
      tensorBytes: value.tensorBytes,
      dtype: value.dtype,
      peakRssMb: sampler.stop(),
    };
  } else {
    figures['diffusersWrite'] = 'already there (written by npm run write-wan21-checkpoint)';
  }
  if (process.env['BENCH_REAL_WAN'] === '1') {
    const sampler = RssSampler.start();
    const { ms, value } = await timed(() =>
      writeWan21DitCheckpoint({ config: CONFIG, layout: 'wan', dir: wanPath }),
    );
    figures['wanWrite'] = { ms, tensorBytes: value.tensorBytes, peakRssMb: sampler.stop() };
  }
  save('checkpoint', figures);
}

/** Inputs of one DiT forward at `shape` with batch `batch`: random latent and context. */
function ditInputs(batch: number, shape: { frames: number; height: number; width: number }) {
  const latent = filled(batch * 16 * shape.frames * shape.height * shape.width, 3).map(
    (v) => v * 50,
  );
  return {
    latent: {
      dtype: 'float32',
      dims: [batch, 16, shape.frames, shape.height, shape.width],
      data: latent,
    },
    timestep: { dtype: 'float32', dims: [batch], data: new Float32Array(batch).fill(750) },
    context: {
      dtype: 'float32',
      dims: [batch, 512, 4096],
      data: filled(batch * 512 * 4096, 5).map((v) => v * 10),
    },
  } as const;
}

async function formStage(): Promise<void> {
  /** BENCH_REAL_FORM_BLOCKS (default 8: 1.59 GB, the most under the 2 GB protobuf limit). */
  const layers = Number(process.env['BENCH_REAL_FORM_BLOCKS'] ?? 8);
  const config = createWan21Config({ layers, name: `wan21-1.3b-${layers}-blocks` }, WAN21_1_3B);
  const small = createWan21Card({ id: 'bench-1.3b-8', config, graphCapture: 'eager' });
  const spec = small.components.find((c) => c.id === 'dit')!;
  const weights = initWeights(config, 1, 'dit');
  const weightBytes = [...weights.values()].reduce((s, t) => s + t.data.byteLength, 0);
  const inputs = ditInputs(2 * SEEDS.length, SHAPE);
  const forms: Record<string, unknown> = {};
  const outputs: Record<string, Float32Array> = {};
  const { loadOrt, onnxArtifactsOf, ortSessionOptions } = await import('@flowfleet/backends');
  for (const form of ['eager', 'captured'] as const) {
    const before = rssMb();
    const sampler = RssSampler.start();
    let createMs: number;
    let run: () => Promise<Float32Array>;
    let release: () => Promise<void>;
    let modelBytes = 0;
    let buildMs = 0;
    if (form === 'eager') {
      const forward = await openRawEagerForward(spec, weights, INTRA_OP);
      createMs = round(forward.createMs, 1);
      run = async () => (await forward.run(inputs))['velocity']!.data as Float32Array;
      release = () => forward.release();
    } else {
      const ort = await loadOrt();
      const built = await timed(async () =>
        onnxArtifactsOf(spec).buildOnnx({
          form: 'captured',
          weights,
          inputDims: { latent: inputs.latent.dims },
        }),
      );
      buildMs = built.ms;
      modelBytes = built.value.length;
      const created = await timed(() =>
        ort.InferenceSession.create(
          built.value,
          ortSessionOptions({ provider: 'cpu', intraOpThreads: INTRA_OP }),
        ),
      );
      createMs = created.ms;
      const session = created.value;
      run = async () => {
        const feeds = Object.fromEntries(
          Object.entries(inputs).map(([n, t]) => [n, new ort.Tensor(t.dtype, t.data, t.dims)]),
        );
        return (await session.run(feeds))['velocity']!.data as Float32Array;
      };
      release = () => session.release();
    }
    const afterCreate = rssMb();
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await timed(run);
      times.push(r.ms);
      outputs[form] = r.value;
    }
    forms[form] = {
      buildMs,
      modelBytes,
      createMs,
      rssGrowthAtCreateMb: round(afterCreate - before, 0),
      peakRssGrowthMb: round(sampler.stop() - before, 0),
      forwardMs: times,
      medianWarmForwardMs: median(times.slice(1)),
    };
    await release();
  }
  save('form', {
    blocks: layers,
    weightBytes,
    forms,
    eagerVsCapturedMaxAbsDiff: maxAbsDiff(outputs['eager']!, outputs['captured']!),
    fullSizeCaptured: `refused: ${4 * 1_418_996_800} bytes of float32 initializers > the 2 GB protobuf limit (MODEL_ONNX_OPTIONS_INVALID)`,
  });
}

async function waitAck(client: FlowfleetClient, version: number): Promise<void> {
  await client.waitForSync('dit', version, { all: true }, { timeoutMs: 3_600_000 });
}

/**
 * Where the worker's compute threads hold weights, in MB per thread: shared with the main thread
 * (SharedArrayBuffers, no second copy), copied on upload, and copied by the ONNX Runtime handler
 * because its binding refused shared memory (Node 20: see packages/backends ort-handler.ts).
 */
async function computeWeights(worker: FlowfleetWorker) {
  const mb = (bytes: number | undefined) => round((bytes ?? 0) / 1e6, 0);
  return (await worker.computeStats()).map((t) => ({
    thread: t.threadIndex,
    sharedMb: mb(t.weightBytesShared),
    copiedOnUploadMb: mb(t.weightBytesCopied),
    ortPrivateCopyMb: mb(t.handlers['ort']?.['weightBytesPrivateCopies']),
  }));
}

async function fleetStage(): Promise<{ medianRolloutMs: number }> {
  const redis = await startBenchRedis();
  const prefix = benchPrefix('real');
  const blobDir = join(DIR, 'blobs');
  const coordinator = createCoordinator({
    redisUrl: redis.url,
    prefix,
    tokens: BENCH_TOKENS,
    blobDir,
    retention: { weightGraceSeconds: 24 * 3600 },
    limits: resolveLimits({ maxBlobBytes: 2_200_000_000 }),
    cards: createCardRegistry([fleetCard]),
  });
  const url = await coordinator.start(0);
  const client = FlowfleetClient.create({ baseUrl: url, token: BENCH_TOKENS.trainer });
  const worker = createWorker({
    redisUrl: redis.url,
    coordinatorUrl: url,
    workerToken: BENCH_TOKENS.worker,
    workerId: 'real-w1',
    prefix,
    backend: 'ort-cpu',
    ortThreads: 1,
    ortIntraOpThreads: INTRA_OP,
    cards: createCardRegistry([fleetCard]),
    models: [fleetCard.id],
    concurrency: 1,
    drainTimeoutMs: 600_000,
    peer: false,
    locks: { lockDurationMs: 120_000 },
  });
  const figures: Record<string, unknown> = {};
  try {
    let sampler = RssSampler.start();
    const start = await timed(() => worker.start());
    figures['workerStart'] = {
      ms: start.ms,
      what: 'version 0 = zeros (allocated, untouched), the eager sessions, registration',
      peakRssMb: sampler.stop(),
    };
    save('fleet', figures);

    sampler = RssSampler.start();
    const t0 = performance.now();
    const pushed = await client.pushCheckpoint('dit', diffusersPath);
    const uploadMs = performance.now() - t0;
    await waitAck(client, pushed.sync.version);
    figures['fullSync'] = {
      bytes: pushed.blobs.reduce((s, b) => s + b.sizeBytes, 0),
      shards: pushed.blobs.length,
      uploadMs: round(uploadMs, 1),
      toEveryAckMs: round(performance.now() - t0, 1),
      peakRssMb: sampler.stop(),
      rssAfterMb: rssMb(),
    };
    save('fleet', figures);

    const version = pushed.sync.version;
    const request = {
      model: card.id,
      prompt: PROMPT,
      promptEmbeds: {
        sha256: (await client.uploadBlob(embeddingBlob(EMBED_TOKENS.prompt, 11))).sha256,
      },
      negativePromptEmbeds: {
        sha256: (await client.uploadBlob(embeddingBlob(EMBED_TOKENS.negative, 12))).sha256,
      },
      seeds: SEEDS,
      shift: SHIFT,
      sampler: 'sde' as const,
      guidanceScale: GUIDANCE,
      noiseLevel: NOISE_LEVEL,
      shape: SHAPE,
      weights: { dit: { exact: version } },
    };
    const rollout = async (steps: number, decodeFrames: 'none' | 'all' = 'none') => {
      const r = await timed(async () => {
        const { id } = await client.enqueueRollouts({ ...request, steps, decodeFrames });
        const done = await client.waitFor(id, { timeoutMs: 3_600_000 });
        if (done.status !== 'completed') throw new Error(`rollout ${id}: ${JSON.stringify(done)}`);
        return done;
      });
      return r;
    };
    sampler = RssSampler.start();
    const warm = await rollout(1);
    const rollouts: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      rollouts.push((await rollout(STEPS)).ms);
      figures['rollouts'] = {
        warmupOneStepMs: warm.ms,
        rolloutMs: rollouts,
        medianRolloutMs: median(rollouts),
        rolloutsPerSec: round(1000 / median(rollouts), 6),
        peakRssMb: sampler.stop(),
        computeWeights: await computeWeights(worker),
      };
      save('fleet', figures);
      sampler = RssSampler.start();
    }
    sampler.stop();

    // The same rollout returning every decoded frame (G × 9 frames of 64×64): the decode's share.
    sampler = RssSampler.start();
    const decoded = await rollout(STEPS, 'all');
    figures['decodedRollout'] = {
      decodeFrames: 'all',
      frames: SEEDS.length * card.frameDecoder!.clip(SHAPE).frames,
      rolloutMs: decoded.ms,
      decodeMs: round(decoded.ms - median(rollouts), 1),
      decodeShare: round((decoded.ms - median(rollouts)) / decoded.ms, 3),
      peakRssMb: sampler.stop(),
    };
    save('fleet', figures);

    const loraDir = join(DIR, 'lora-r32');
    const loraLayers = writeLoraAdapter(loraDir);
    sampler = RssSampler.start();
    const l0 = performance.now();
    const lora = await client.pushCheckpoint('dit', loraDir, {
      lora: { base: version, expectLayers: loraLayers },
    });
    await waitAck(client, lora.sync.version);
    figures['loraSync'] = {
      rank: LORA_RANK,
      layers: loraLayers,
      bytes: lora.blobs[0]!.sizeBytes,
      toEveryAckMs: round(performance.now() - l0, 1),
      peakRssMb: sampler.stop(),
      rssAfterMb: rssMb(),
      computeWeights: await computeWeights(worker),
    };
    save('fleet', figures);
    if (STAGES.includes('train')) await trainStage(url);
    return { medianRolloutMs: median(rollouts) };
  } finally {
    await worker.close();
    await client.close();
    await coordinator.close();
    await deletePrefix(redis.url, prefix);
    await redis.stop();
  }
}

/**
 * One sample's decode through the card's frame decoder on the worker's path (the ort component
 * builder on a compute pool): the ms of each forward (one per latent frame) and the peak RSS.
 */
async function decodeTimes(
  shape: { frames: number; height: number; width: number },
  forward: (inputs: TensorMap) => Promise<Readonly<Record<string, TensorData>>>,
): Promise<Record<string, unknown>> {
  const decoder = card.frameDecoder!;
  const dims = [16, shape.frames, shape.height, shape.width];
  const latent = gaussianNoise(
    21,
    0,
    dims.reduce((a, b) => a * b, 1),
  );
  const clip = decoder.clip(shape);
  const stepMs: number[] = [];
  const rssBeforeMb = rssMb();
  const sampler = RssSampler.start();
  const started = performance.now();
  await decoder.decode(latent, dims, clip.frames - 1, async (inputs) => {
    const from = performance.now();
    const out = await forward(inputs);
    stepMs.push(round(performance.now() - from, 1));
    console.log(
      `[vae] ${shape.frames}x${shape.height}x${shape.width}: latent frame ${stepMs.length - 1} ${stepMs.at(-1)} ms`,
    );
    return out;
  });
  return {
    latent: dims,
    video: `${clip.height}x${clip.width}x${clip.frames}`,
    frames: clip.frames,
    latentFrameMs: stepMs,
    firstLatentFrameMs: stepMs[0],
    medianLaterLatentFrameMs: stepMs.length > 1 ? round(median(stepMs.slice(1)), 1) : null,
    totalMs: round(performance.now() - started, 1),
    msPerDecodedFrame: round((performance.now() - started) / clip.frames, 1),
    rssBeforeMb,
    peakRssMb: sampler.stop(),
  };
}

async function vaeStage(): Promise<void> {
  const { createOrtComponentBuilder, OrtSessions } = await import('@flowfleet/backends');
  const spec = card.components.find((c) => c.id === card.frameDecoder!.componentId)!;
  const figures: Record<string, unknown> = {};
  const before = rssMb();
  const init = await timed(async () => initVaeDecoderWeights(WAN21_VAE, 1));
  const weights: WeightSet = { id: 'bench-vae@1', tensors: init.value };
  figures['weights'] = {
    parameters: [...init.value.values()].reduce((s, t) => s + t.data.length, 0),
    tensors: init.value.size,
    initMs: init.ms,
    rssGrowthMb: round(rssMb() - before, 0),
  };
  const pool = await ComputePool.create({ threads: 1 });
  try {
    const sessions = await OrtSessions.attach(pool, { intraOpThreads: INTRA_OP });
    const component = await createOrtComponentBuilder({ sessions })(spec, undefined);
    try {
      const forward = (inputs: TensorMap) => component.run(inputs, weights);
      // Warm-up: the first forward of a shape builds its session.
      await decodeTimes({ frames: 1, height: SHAPE.height, width: SHAPE.width }, forward);
      figures['benchLatent'] = await decodeTimes(SHAPE, forward);
      save('vae', figures);
      if (process.env['BENCH_REAL_VAE_BIG'] !== '0') {
        figures['bigClip'] = await decodeTimes(BIG_SHAPE, forward);
        save('vae', figures);
      }
    } finally {
      await component.dispose();
    }
  } finally {
    await pool.close();
  }
}

/** Runs `command` with this process's output, from the repository root; rejects on a failure. */
function runChild(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', cwd: ROOT });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${args[0]}: exit ${code ?? signal}`)),
    );
  });
}

/**
 * One FlowGRPO LoRA iteration of the 1.3B card with a pixel reward, by the example trainer
 * (examples/flowgrpo/train.py, PyTorch) against the fleet stage's fleet: it loads the bf16
 * checkpoint, pushes it as its base, encodes its prompt with a random-init umT5 of the real
 * width (4096) once, then rolls out G = 4 (4 SDE steps, CFG 4.5, the first decoded frame),
 * scores JPEG compressibility, recomputes the 2 trained steps' log-probs with gradients and syncs
 * the r32 adapter. Figures: the trainer's timed phases (its log line), the worker's peak RSS.
 */
async function trainStage(url: string): Promise<void> {
  const python = join(ROOT, '.venv', 'bin', 'python');
  const umt5 = join(DIR, 'umt5-random');
  if (!existsSync(join(umt5, 'text_encoder'))) {
    await runChild(python, ['examples/flowgrpo/write_random_umt5.py', umt5, '--d-model', '4096']);
  }
  const log = join(DIR, 'train-1.3b.jsonl');
  const flags = [
    ...['--model', card.id, '--checkpoint', diffusersPath, '--text-encoder', umt5],
    ...['--reward', 'jpeg-compressibility', '--reward-frames', 'first', '--prompt', PROMPT],
    ...['--iterations', '1', '--group', String(SEEDS.length), '--steps', String(STEPS)],
    ...['--frames', String(SHAPE.frames), '--size', String(SHAPE.height)],
    ...['--timestep-fraction', '0.5', '--micro-batch', '2', '--torch-threads', String(INTRA_OP)],
  ];
  const sampler = RssSampler.start();
  const started = performance.now();
  await runChild(python, [
    'examples/flowgrpo/train.py',
    ...flags,
    ...['--url', url, '--token', BENCH_TOKENS.trainer, '--timeout', '3600', '--log', log],
  ]);
  const wallMs = performance.now() - started;
  const record = JSON.parse(readFileSync(log, 'utf8').split('\n')[0]!) as Record<string, unknown>;
  const ms = (key: string) => round(Number(record[key]) * 1000, 1);
  save('train', {
    command: `train.py ${flags.join(' ')}`,
    rolloutMs: ms('rollout_s'),
    rewardMs: ms('reward_s'),
    trainMs: ms('train_s'),
    loraSyncMs: ms('sync_s'),
    adapterBytes: record['adapter_bytes'],
    ratioErrMax: record['ratio_err_max'],
    rewardMean: record['reward_mean'],
    trainerPeakRssMb: record['peak_rss_mb'],
    workerPeakRssMb: sampler.stop(),
    wallMsWithStartUp: round(wallMs, 1),
  });
}

async function rawStage(fleet: { medianRolloutMs: number } | undefined): Promise<void> {
  const figures: Record<string, unknown> = {};
  let sampler = RssSampler.start();
  const before = rssMb();
  const loaded = await timed(() => loadCheckpoint(ditSpec, diffusersPath));
  figures['loadCheckpoint'] = {
    path: 'diffusers bf16, 2 shards',
    ms: loaded.ms,
    rssGrowthMb: round(rssMb() - before, 0),
    peakRssMb: sampler.stop(),
  };
  save('raw', figures);
  sampler = RssSampler.start();
  const dit = await openRawEagerForward(ditSpec, loaded.value, INTRA_OP);
  // The card has no text encoder: the raw loop's "encoder" hands back the same embeddings the
  // fleet's rollouts fetched, zero-padded to 512 rows ([uncond, cond], as the card pads them).
  const row = CONFIG.textLen * CONFIG.textDim;
  const padded = new Float32Array(2 * row);
  padded.set(embeddingValues(EMBED_TOKENS.negative, 12), 0);
  padded.set(embeddingValues(EMBED_TOKENS.prompt, 11), row);
  const encoder = {
    run: async () => ({
      context: {
        dtype: 'float32',
        dims: [2, CONFIG.textLen, CONFIG.textDim],
        data: padded,
      } as TensorData,
    }),
  };
  figures['sessionCreateMs'] = round(dit.createMs, 1);
  const unused = { id: 'unused', tensors: new Map<string, TensorData>() };
  const workload: RawWorkload = {
    config: CONFIG,
    prompt: PROMPT,
    seeds: SEEDS,
    steps: STEPS,
    shift: SHIFT,
    guidanceScale: GUIDANCE,
    noiseLevel: NOISE_LEVEL,
    shape: SHAPE,
    ditWeights: unused,
    textEncoderWeights: unused,
  };
  const sessions = { encoder, dit };
  await rawRollout(sessions, { ...workload, steps: 1 });
  dit.takeRunMs();
  const rollouts: number[] = [];
  const forwards: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    rollouts.push((await timed(() => rawRollout(sessions, workload))).ms);
    forwards.push(...dit.takeRunMs());
    figures['rollouts'] = {
      rolloutMs: rollouts,
      medianRolloutMs: median(rollouts),
      rolloutsPerSec: round(1000 / median(rollouts), 6),
      ditForwardMs: forwards.map((v) => round(v, 1)),
      medianDitForwardMs: round(median(forwards), 1),
      peakRssMb: sampler.stop(),
    };
    if (fleet !== undefined) {
      figures['fleetOverRaw'] = round(median(rollouts) / fleet.medianRolloutMs, 4);
    }
    save('raw', figures);
    sampler = RssSampler.start();
  }
  const big = ditInputs(1, BIG_SHAPE);
  const bigRun = await timed(() => dit.run(big));
  figures['bigLatentForward'] = {
    video: '240x416x33',
    latent: [16, BIG_SHAPE.frames, BIG_SHAPE.height, BIG_SHAPE.width],
    batch: 1,
    tokens: (BIG_SHAPE.frames * BIG_SHAPE.height * BIG_SHAPE.width) / 4,
    ms: bigRun.ms,
    peakRssMb: sampler.stop(),
  };
  save('raw', figures);
  await dit.release();
}

await runBench(async () => {
  console.log(
    `bench:real: stages ${STAGES.join(',')}, dir ${DIR}, free ${round(freemem() / 1e9, 1)} GB`,
  );
  if (STAGES.includes('checkpoint')) await checkpointStage();
  const fleet = STAGES.includes('fleet') ? await fleetStage() : undefined;
  if (STAGES.includes('form')) await formStage();
  if (STAGES.includes('vae')) await vaeStage();
  if (STAGES.includes('raw')) await rawStage(fleet);
  console.log('\nwrote bench/results/real.json');
});
