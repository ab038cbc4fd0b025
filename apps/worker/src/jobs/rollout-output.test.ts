import { readRolloutFile, RolloutSummarySchema } from '@flowfleet/formats';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { ComputePool } from '@flowfleet/platform';
import { rolloutRequestSchema } from '@flowfleet/protocol';
import { runRollout } from '@flowfleet/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpBackends } from '../compute/backend-setup.js';
import { ModelHost } from '../compute/model-host.js';
import { rolloutOutput } from './rollout-output.js';

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

function runtimeRequest(sampler: 'sde' | 'ode') {
  const request = rolloutRequestSchema().parse({
    model: 'wan21-mini',
    prompt: 'a red fox',
    seeds: [3, 4],
    steps: 2,
    sampler,
    shape: { frames: 1, height: 4, width: 4 },
  });
  const { prompt, seeds, steps, shift, noiseLevel, guidanceScale, shape } = request;
  return { prompt, seeds, steps, shift, sampler, noiseLevel, guidanceScale, shape };
}

describe('rolloutOutput', () => {
  it('writes the same result bytes for a capture run and a replay run, and a summary of the same record', async () => {
    const instance = host.instance('wan21-mini');
    const first = await runRollout(instance, runtimeRequest('sde'));
    const second = await runRollout(instance, runtimeRequest('sde'));
    // The runs differ in what is per attempt...
    expect(first.captureStats.captures).toBeGreaterThan(0);
    expect(second.captureStats.captures).toBe(0);
    // ...but not in the result file, which the trainer reads back.
    const out = rolloutOutput('job-1', first, 'w1');
    expect(
      Buffer.from(rolloutOutput('job-1', second, 'w1').result).equals(Buffer.from(out.result)),
    ).toBe(true);
    const file = readRolloutFile(out.result);
    expect(file.latents).toEqual(first.record.latents);
    expect(file.metadata.weightsVersions).toEqual({ dit: 0, text_encoder: 0 });
    const { summary } = out;
    expect(RolloutSummarySchema.parse(summary)).toEqual(summary);
    // The summary has the file's layouts and lengths: timesteps [T], logProbs [T][G].
    expect(summary.timesteps).toEqual(Array.from(file.timesteps));
    expect(summary.logProbs?.flat()).toEqual(Array.from(file.logProbs!));
    expect(summary.timings.stepMs).toHaveLength(2);
    expect(summary).toMatchObject({ worker: 'w1', backend: { dit: 'cpu-reference' } });
  });

  it('holds no log-probs for an ode rollout, in the file or the summary', async () => {
    const result = await runRollout(host.instance('wan21-mini'), runtimeRequest('ode'));
    const out = rolloutOutput('job-2', result, 'w1');
    expect(readRolloutFile(out.result).logProbs).toBeNull();
    expect(out.summary.logProbs).toBeNull();
  });
});
