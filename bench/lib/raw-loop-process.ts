// The raw baseline of bench:fleet in its own process (a worker runs in its own process too): the
// wan21 loop of bench/rollout-raw-loop.ts on bare onnxruntime-node sessions of the card's captured
// graphs (bench/lib/raw-ort-sessions.ts), with the worker's version-0 weights. argv[2] is the
// workload as JSON; IPC messages `{op: 'run', rollouts}` answer per-rollout timings and the
// sha256 of the last trajectory, `{op: 'close'}` releases the sessions and exits.
import { DEFAULT_CARD_REGISTRY, type ModelCard } from '@flowfleet/models';
import { initWeights, type Wan21Config } from '@flowfleet/models/wan21';
import { rawInputDims, rawRollout, type RawWorkload } from '../rollout-raw-loop.js';
import {
  bytesSha256,
  type RawProcessWorkload,
  type RawRunReply,
  type RawSample,
} from './raw-loop-client.js';
import { openRawOrtForward } from './raw-ort-sessions.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as RawProcessWorkload;
// The raw loop is wan21's; the card gives its config and graphs.
const card = DEFAULT_CARD_REGISTRY.get(spec.model) as ModelCard<Wan21Config>;
const weightSet = (kind: 'dit' | 'text_encoder') => ({
  id: `raw/${kind}@0`,
  tensors: initWeights(card.config, spec.weightsSeed, kind),
});
const workload: RawWorkload = {
  config: card.config,
  prompt: spec.prompt,
  seeds: spec.seeds,
  steps: spec.steps,
  shift: spec.shift,
  guidanceScale: spec.guidanceScale,
  noiseLevel: spec.noiseLevel,
  shape: spec.shape,
  ditWeights: weightSet('dit'),
  textEncoderWeights: weightSet('text_encoder'),
};
const dims = rawInputDims(workload);
const opened = performance.now();
const encoder = await openRawOrtForward(
  card,
  'text_encoder',
  workload.textEncoderWeights,
  dims.encoder,
  spec.intraOpThreads,
);
const dit = await openRawOrtForward(
  card,
  'dit',
  workload.ditWeights,
  dims.dit,
  spec.intraOpThreads,
);
await rawRollout({ encoder, dit }, workload); // warm-up: first runs allocate
encoder.takeRunMs();
dit.takeRunMs();
dit.takeRuns();

process.on('message', (message: { op: 'run'; rollouts: number } | { op: 'close' }) => {
  void (async () => {
    try {
      if (message.op === 'close') {
        await Promise.all([encoder.release(), dit.release()]);
        process.exit(0);
      }
      const samples: RawSample[] = [];
      const cpu = process.cpuUsage();
      let last: Awaited<ReturnType<typeof rawRollout>> | undefined;
      for (let i = 0; i < message.rollouts; i++) {
        const started = performance.now();
        last = await rawRollout({ encoder, dit }, workload);
        const ms = performance.now() - started;
        samples.push({ ms, runMs: encoder.takeRunMs() + dit.takeRunMs() });
      }
      const used = process.cpuUsage(cpu);
      const reply: RawRunReply = {
        samples,
        cpuUs: used.user + used.system,
        ditRuns: dit.takeRuns(),
        latentsSha256: last === undefined ? '' : bytesSha256(last.latents),
        logProbsSha256: last === undefined ? '' : bytesSha256(last.logProbs),
      };
      process.send?.(reply);
    } catch (error) {
      process.send?.({
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  })();
});
process.send?.({ ready: true, openMs: performance.now() - opened });
