import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { ComputePool } from '@flowfleet/platform';
import { RolloutSummarySchema, rolloutRequestSchema } from '@flowfleet/protocol';
import { readRolloutResult, runRollout } from '@flowfleet/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpBackends } from './backend-setup.js';
import { ModelHost } from './model-host.js';
import { backendName, deterministicResultBytes, summarizeRollout } from './rollout-output.js';

let host: ModelHost;
let pool: ComputePool;
const facts = { device: 'cpu' as const, arch: 'generic', features: [], cpuArch: 'generic' };

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  const { platform } = await setUpBackends({
    backend: 'cpu',
    facts,
    extraKernels: [],
    pool,
    componentKinds: DEFAULT_CARD_REGISTRY.componentKinds(),
    ortIntraOpThreads: 1,
    logger: pino({ level: 'silent' }),
  });
  host = await ModelHost.create(['wan21-mini'], platform, 'unit', DEFAULT_CARD_REGISTRY);
});

afterAll(async () => {
  await host?.close();
  await pool?.close();
});

const request = rolloutRequestSchema().parse({
  model: 'wan21-mini',
  prompt: 'a red fox',
  seeds: [3, 4],
  steps: 2,
  shape: { frames: 1, height: 4, width: 4 },
});

function runtimeRequest() {
  const { prompt, seeds, steps, shift, sampler, noiseLevel, guidanceScale, shape } = request;
  return { prompt, seeds, steps, shift, sampler, noiseLevel, guidanceScale, shape };
}

describe('rollout output', () => {
  it('writes the same result bytes for a capture run and a replay run, and a valid summary', async () => {
    const instance = host.instance('wan21-mini');
    const first = await runRollout(instance, runtimeRequest());
    const second = await runRollout(instance, runtimeRequest());
    // The runs differ in what is per attempt...
    expect(first.captureStats.captures).toBeGreaterThan(0);
    expect(second.captureStats.captures).toBe(0);
    // ...but not in the result file, which the trainer can read back.
    const bytes = deterministicResultBytes(first);
    expect(Buffer.from(deterministicResultBytes(second)).equals(Buffer.from(bytes))).toBe(true);
    const read = readRolloutResult(bytes);
    expect(read.latents).toEqual(first.latents);
    expect(read.weightsVersions).toEqual({ dit: 0, text_encoder: 0 });
    const summary = summarizeRollout('job-1', request, first, { workerId: 'w1', facts });
    expect(RolloutSummarySchema.parse(summary)).toEqual(summary);
    expect(summary.logProbs).toHaveLength(2);
    expect(summary.logProbs[1]?.[0]).toBe(first.logProbs[1]);
    expect(summary.timesteps).toEqual(summary.sigmas.map((s) => 1000 * s));
    expect(summary.backend).toBe('cpu-reference');
  });

  it('names a mixed backend by component', () => {
    expect(backendName({ dit: 'ort-cpu', text_encoder: 'ort-cpu' })).toBe('ort-cpu');
    expect(backendName({ text_encoder: 'cpu-reference', dit: 'ort-cpu' })).toBe(
      'dit=ort-cpu,text_encoder=cpu-reference',
    );
  });
});
