// The device kit's measurements (bench/device/README.md): on the machine it runs on, the WebGPU
// adapter detection finds, each card's DiT forward eager and captured on onnxruntime's webgpu
// provider against the same machine's cpu provider (same inputs, same run), the cross-device
// parity of those forwards, whether ORT's own WebGPU graph capture can be reached from Node, and
// one rollout group through a local fleet (redis-server, coordinator, a webgpu and a cpu worker as
// processes) on each device. Writes one JSON.
//
//   node device-bench.js --out device.json [--latent 9x30x52] [--batch 2] [--runs 5]
//     [--cards wan21-mini,wan2.1-t2v-1.3b] [--group 4] [--steps 10] [--rollout-latent FxHxW]
//     [--apps <dir of coordinator.js/worker.js>] [--redis-server <path>] [--no-fleet]
//
// From sources: npm run bench:device -- --latent 1x8x8 --rollout-latent 1x8x8 (lavapipe sizes).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  createOrtComponentBuilder,
  loadOrt,
  OrtSessions,
  PROBE_MODEL_BYTES,
} from '@flowfleet/backends';
import { DEFAULT_CARD_REGISTRY, type ModelComponentSpec } from '@flowfleet/models';
import { gaussianNoise } from '@flowfleet/numerics';
import {
  bitIdentical,
  ComputePool,
  detectPlatform,
  DEVICE_ENV,
  requestWebGpuAdapter,
  within,
  type ComponentForward,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import { machineFacts, round, timingStats } from '../lib/bench-report.js';
import { runFleetGroups, type FleetGroupResult } from './device-fleet.js';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: 'device.json' },
    latent: { type: 'string', default: '9x30x52' },
    batch: { type: 'string', default: '2' },
    runs: { type: 'string', default: '5' },
    cards: { type: 'string', default: 'wan21-mini,wan2.1-t2v-1.3b' },
    group: { type: 'string', default: '4' },
    steps: { type: 'string', default: '10' },
    'rollout-latent': { type: 'string' },
    apps: { type: 'string' },
    'redis-server': { type: 'string', default: 'redis-server' },
    'no-fleet': { type: 'boolean', default: false },
  },
});

function dims(text: string): [number, number, number] {
  const parts = text.split('x').map(Number);
  if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`a latent is FxHxW (e.g. 9x30x52), not '${text}'`);
  }
  return parts as [number, number, number];
}

const [frames, height, width] = dims(args.latent);
const batch = Number(args.batch);
const runs = Number(args.runs);

/**
 * Inputs of one forward of a latent-sized component (a DiT) at the bench's batch and latent, from
 * the card's own `forwardInputDims`: so the kit measures any card without naming its model.
 */
function latentInputs(spec: ModelComponentSpec): TensorMap {
  const inputDims = spec.forwardInputDims(batch, { frames, height, width });
  return Object.fromEntries(
    Object.entries(inputDims).map(([name, dims], stream) => [
      name,
      {
        dtype: 'float32',
        dims: [...dims],
        data: gaussianNoise(
          7,
          stream,
          dims.reduce((a, b) => a * b, 1),
        ),
      },
    ]),
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

/** The forward's first output (a DiT's velocity). */
const firstOutput = (out: Record<string, { data: unknown }>): Float32Array =>
  Object.values(out)[0]?.data as Float32Array;

/** Eager and captured timings of one component on one provider, plus the outputs to compare. */
async function measureProvider(component: ComponentForward, inputs: TensorMap, weights: WeightSet) {
  const first = await timed(() => component.run(inputs, weights));
  const eagerMs: number[] = [];
  for (let i = 0; i < runs; i++)
    eagerMs.push((await timed(() => component.run(inputs, weights))).ms);
  const result: Record<string, unknown> = {
    firstRunMs: round(first.ms, 1),
    eager: timingStats(eagerMs),
  };
  let captured: Float32Array | undefined;
  if (component.capture !== undefined) {
    try {
      const inputDims = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.dims]));
      const capture = component.capture.bind(component);
      const build = await timed(() => capture(weights, inputDims));
      const replayFirst = await timed(() => build.value.run(inputs));
      const replayMs: number[] = [];
      for (let i = 0; i < runs; i++) replayMs.push((await timed(() => build.value.run(inputs))).ms);
      captured = firstOutput(replayFirst.value);
      result['captured'] = {
        buildMs: round(build.ms, 1),
        firstRunMs: round(replayFirst.ms, 1),
        ...timingStats(replayMs),
        bitIdenticalToEager: bitIdentical(captured, firstOutput(first.value)),
      };
      await build.value.dispose();
    } catch (error) {
      result['captured'] = { error: (error as Error).message };
    }
  }
  return { result, eager: firstOutput(first.value) };
}

async function measureCard(
  cardId: string,
  sessions: OrtSessions,
): Promise<Record<string, unknown>> {
  if (!DEFAULT_CARD_REGISTRY.ids.includes(cardId)) {
    return {
      card: cardId,
      status: 'not in this build',
      known: DEFAULT_CARD_REGISTRY.ids,
      note: 'the kit measures the dit of every card passed to --cards that the build registers; rebuild the kit once the card lands',
    };
  }
  const card = DEFAULT_CARD_REGISTRY.get(cardId);
  const spec = card.components.find((c) => c.latentSized && c.onnx !== undefined);
  if (spec === undefined) return { card: cardId, status: 'no latent-sized ONNX component' };
  const inputs = latentInputs(spec);
  const weights: WeightSet = { id: `${cardId}/${spec.id}@bench`, tensors: spec.initWeights(1) };
  const providers: Record<string, unknown> = {};
  const outputs: Record<string, Float32Array> = {};
  for (const provider of ['webgpu', 'cpu'] as const) {
    try {
      const component = await createOrtComponentBuilder({ provider, sessions })(spec, undefined);
      try {
        const measured = await measureProvider(component, inputs, weights);
        providers[provider] = measured.result;
        outputs[provider] = measured.eager;
      } finally {
        await component.dispose();
      }
    } catch (error) {
      providers[provider] = { error: (error as Error).message };
    }
  }
  const parity =
    outputs['webgpu'] !== undefined && outputs['cpu'] !== undefined
      ? (({ maxAbs, maxRel }) => ({ maxAbs, maxRel }))(
          within(outputs['webgpu'], outputs['cpu'], { rtol: 0, atol: 0 }),
        )
      : undefined;
  const speed = (p: string, form: 'eager' | 'captured') =>
    ((providers[p] as Record<string, { medianMs?: number }> | undefined)?.[form]?.medianMs ??
      NaN) as number;
  return {
    card: cardId,
    component: spec.id,
    inputDims: Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.dims])),
    providers,
    webgpuVsCpu: parity,
    speedup: {
      eager: round(speed('cpu', 'eager') / speed('webgpu', 'eager'), 2),
      captured: round(speed('cpu', 'captured') / speed('webgpu', 'captured'), 2),
    },
  };
}

/** Whether ORT's own WebGPU graph capture is reachable from onnxruntime-node (ADR 011). */
async function captureProbe(): Promise<Record<string, unknown>> {
  const ort = await loadOrt();
  const probe: Record<string, unknown> = {};
  try {
    await ort.InferenceSession.create(PROBE_MODEL_BYTES, {
      executionProviders: [{ name: 'webgpu', enableGraphCapture: '1' } as never],
    });
    probe['enableGraphCaptureOption'] = 'accepted';
  } catch (error) {
    probe['enableGraphCaptureOption'] = (error as Error).message;
  }
  try {
    const up = await ort.InferenceSession.create(PROBE_MODEL_BYTES, {
      executionProviders: ['webgpu'],
      preferredOutputLocation: 'gpu-buffer',
    });
    const down = await ort.InferenceSession.create(PROBE_MODEL_BYTES, {
      executionProviders: ['webgpu'],
    });
    const [input] = up.inputNames;
    const [output] = up.outputNames;
    const x = new ort.Tensor('float32', Float32Array.from([42]), [1]);
    const onGpu = (await up.run({ [input!]: x }))[output!]!;
    const back = (await down.run({ [input!]: onGpu }))[output!]!;
    probe['gpuBufferOutputLocation'] = onGpu.location;
    probe['readBackThroughAnotherSession'] = Array.from(back.data as Float32Array);
    await up.release();
    await down.release();
  } catch (error) {
    probe['gpuBuffer'] = (error as Error).message;
  }
  return probe;
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const adapter = requestWebGpuAdapter(process.env);
  let facts: unknown;
  try {
    facts = detectPlatform({ env: { ...process.env, [DEVICE_ENV]: 'webgpu' } });
  } catch (error) {
    facts = { error: (error as Error).message };
  }
  const pool = await ComputePool.create({ threads: 1 });
  const report: Record<string, unknown> = {
    kit: 'flowfleet-device-kit',
    at: started,
    machine: machineFacts(),
    adapter,
    platform: facts,
  };
  try {
    const sessions = await OrtSessions.attach(pool, { intraOpThreads: 1 });
    report['ortProviders'] = await sessions.probeAll();
    report['forwards'] = [];
    for (const cardId of args.cards.split(',').filter(Boolean)) {
      console.error(
        `device-bench: ${cardId} at batch ${batch}, latent ${frames}×${height}×${width}`,
      );
      (report['forwards'] as unknown[]).push(await measureCard(cardId, sessions));
    }
  } finally {
    await pool.close();
  }
  report['ortGraphCapture'] = await captureProbe();
  if (!args['no-fleet']) {
    const [rf, rh, rw] = dims(args['rollout-latent'] ?? args.latent);
    const groups: FleetGroupResult = await runFleetGroups({
      appsDir: args.apps,
      redisServer: args['redis-server'],
      group: Number(args.group),
      steps: Number(args.steps),
      shape: { frames: rf, height: rh, width: rw },
    });
    report['rolloutGroup'] = groups;
  }
  writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
  console.error(`device-bench: wrote ${args.out}`);
}

await main();
