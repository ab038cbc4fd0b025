// What the edge accepts, a worker completes (issue 10, item 9): rollout request bodies, weighted
// to the edges of every numeric range (tiny and huge noise levels and shifts, guidance at its
// ends, explicit sigma tables, steps and latent sizes at the limit, odd latents), go through the
// coordinator's own admission (`admitRolloutRequest`: the request schema under the fleet's
// limits, then the card's rules) and, when accepted, through what a worker does with the job:
// the dequeue schema, the real runtime on wan21-mini's TS reference, the JSON summary and the
// result file. Accepted ⇒ finite latents and log-probs that measure the noise (not float32
// rounding) and a summary that passes its schema; refused ⇒ a coded 4xx error.
import { admitRolloutRequest } from '@flowfleet/coordinator';
import { ERROR_CODES, isFlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { RolloutSummarySchema, type RolloutRecord } from '@flowfleet/formats';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { wan21MiniCard } from '@flowfleet/models/wan21';
import { ComputePool } from '@flowfleet/platform';
import { NOISE_LEVEL_RANGE, SHIFT_RANGE, flowGrpoStdDev } from '@flowfleet/numerics';
import {
  resolveLimits,
  rolloutJobFor,
  rolloutJobSchema,
  rolloutRequestSchema,
} from '@flowfleet/protocol';
import { ModelInstance, runRollout } from '@flowfleet/runtime';
import { rolloutOutput } from '@flowfleet/worker';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuPlatform, weightsOf } from '../runtime/runtime-fixtures.js';

// The default step limit; a latent limit small enough that a group at the limit runs in
// milliseconds on the TS reference (the bounds under test do not depend on the latent's size).
const limits = resolveLimits({ maxLatentElements: 96 });
const schema = rolloutRequestSchema(limits);
const jobSchema = rolloutJobSchema(limits);
const REFUSAL_CODES = new Set<ErrorCode>([
  'PROTO_INVALID_REQUEST',
  'MODEL_INVALID_REQUEST',
  'MODEL_UNKNOWN_CARD',
]);

let pool: ComputePool;
let instance: ModelInstance;

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  instance = await ModelInstance.create({
    card: wan21MiniCard,
    platform: cpuPlatform(pool),
    weights: {
      dit: { version: 0, weights: weightsOf('dit', 0) },
      text_encoder: { version: 0, weights: weightsOf('text_encoder', 0) },
    },
  });
});

afterAll(async () => {
  await instance?.close();
  await pool?.close();
});

/** The ends of a range and values just inside, anything in it, and values just outside it. */
function edgy(
  inside: readonly number[],
  outside: readonly number[],
  min: number,
  max: number,
): fc.Arbitrary<number> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...inside), weight: 4 },
    { arbitrary: fc.double({ min, max, noNaN: true }), weight: 2 },
    { arbitrary: fc.constantFrom(...outside), weight: 1 },
  );
}

const a = NOISE_LEVEL_RANGE;
const noiseLevel = edgy(
  [a.min, a.min * (1 + 1e-9), 0.002, 0.05, 0.7, 0.7, 1, 1.5, 1.999, a.max],
  [0, 5e-324, 1e-300, a.min * 0.99, 2.0001, 10],
  a.min,
  a.max,
);
const shift = edgy(
  [SHIFT_RANGE.min, 0.001, 0.05, 1, 3, 3, 10, 30, SHIFT_RANGE.max],
  [5e-324, 0, SHIFT_RANGE.min / 2, 100.5],
  SHIFT_RANGE.min,
  SHIFT_RANGE.max,
);
const guidanceScale = edgy([0, 1, 1, 4.5, 100], [100.0001, -0.5], 0, 100);
const steps = fc.oneof(
  { arbitrary: fc.constantFrom(1, 2, 3, limits.maxSteps, 0, limits.maxSteps + 1), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 12 }), weight: 3 },
);

/** Explicit schedules: random strictly decreasing tables, tables at the step limit, odd ones. */
const sigmas = fc.oneof(
  fc
    .uniqueArray(fc.double({ min: 0, max: 1, minExcluded: true, maxExcluded: true, noNaN: true }), {
      minLength: 0,
      maxLength: 10,
    })
    .chain((inner) =>
      fc
        .constantFrom(1, 0.9, inner[0] ?? 0.5)
        .map((first) => [first, ...inner.filter((s) => s < first).sort((x, y) => y - x), 0]),
    ),
  fc.constantFrom(
    Array.from({ length: limits.maxSteps + 1 }, (_, i) => 1 - i / limits.maxSteps),
    Array.from({ length: limits.maxSteps + 2 }, (_, i) => 1 - i / (limits.maxSteps + 1)),
    [1, 0],
    [1, 1 - 2 ** -52, 0],
    [1, 1e-300, 0],
    [1, 0.5, 1e-12, 0],
    [0.5, 0],
    [1, 0.5, 0.5, 0],
    [1, 0.5, 0.1],
  ),
);

/** Latents at the limit (96 elements per group), odd ones (not whole 2×2 patches), big ones. */
const shape = fc.record({
  frames: fc.constantFrom(1, 1, 2, 3),
  height: fc.constantFrom(2, 2, 4, 8, 3),
  width: fc.constantFrom(2, 2, 4, 6, 5),
});

/** A schedule: linear-shift by steps and shift, or an explicit table (with or without steps). */
const schedule = fc.oneof(
  { arbitrary: fc.record({ steps, shift }, { requiredKeys: [] }), weight: 3 },
  { arbitrary: fc.record({ sigmas }), weight: 1 },
  { arbitrary: sigmas.map((table) => ({ sigmas: table, steps: table.length - 1 })), weight: 1 },
);

const body = fc
  .record(
    {
      model: fc.constantFrom(
        'wan21-mini',
        'wan21-mini',
        'wan21-mini',
        'wan21-mini',
        'no-such-card',
      ),
      prompt: fc.string({ minLength: 1, maxLength: 12 }),
      seeds: fc.uniqueArray(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), {
        minLength: 1,
        maxLength: 3,
      }),
      sampler: fc.constantFrom('sde', 'sde', 'ode'),
      guidanceScale,
      noiseLevel,
      shape,
    },
    { requiredKeys: ['model', 'prompt', 'seeds', 'shape'] },
  )
  .chain((fields) => schedule.map((s) => ({ ...fields, ...s })));

const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/**
 * A step's log-prob is the mean of −z²/2 − ln e − ½ ln 2π over the sample's elements, z the
 * standard normal noise, so it sits within a few standard errors (≤ 0.18 for ≥ 16 elements) of
 * −½ − ln e − ½ ln 2π whatever the model does. When float32 rounding of the mean is not small
 * against e, `(sample − μ)/e` is rounding, not z, and the log-prob falls far below.
 */
function expectLogProbsMeasureTheNoise(record: RolloutRecord, logProbs: Float64Array): void {
  const { steps, group, noiseLevel } = record.metadata;
  for (let i = 0; i < steps; i++) {
    const dt = record.sigmas[i]! - record.sigmas[i + 1]!;
    const e = flowGrpoStdDev(record.sigmas, i, noiseLevel) * Math.sqrt(dt);
    const expected = -0.5 - Math.log(e) - HALF_LOG_TWO_PI;
    for (let g = 0; g < group; g++) {
      const logProb = logProbs[i * group + g]!;
      if (!(Math.abs(logProb - expected) < 2.5)) {
        expect.fail(
          `step ${i} sample ${g}: log-prob ${logProb}, expected ≈ ${expected} (e = ${e})`,
        );
      }
    }
  }
}

/** What a worker does with an accepted job, minus Redis and HTTP: every check it would make. */
async function completeOnWorker(accepted: ReturnType<typeof admitRolloutRequest>): Promise<void> {
  const job = jobSchema.parse(
    JSON.parse(JSON.stringify(rolloutJobFor(accepted.request, accepted.capabilities))),
  );
  const result = await runRollout(instance, job.request);
  const { record } = result;
  expect(record.latents.every(Number.isFinite)).toBe(true);
  if (record.metadata.sampler === 'sde') {
    expect(record.logProbs).not.toBeNull();
    expect(record.logProbs!.every(Number.isFinite)).toBe(true);
    expectLogProbsMeasureTheNoise(record, record.logProbs!);
  } else {
    expect(record.logProbs).toBeNull();
  }
  // The worker's own output step: the file and the summary, each checked against RolloutFile v1.
  const { result: bytes, summary } = rolloutOutput(job.id, result, 'w-prop');
  // JSON turns a non-finite log-prob into null, which the summary schema refuses.
  expect(RolloutSummarySchema.safeParse(JSON.parse(JSON.stringify(summary))).success).toBe(true);
  expect(bytes.byteLength).toBeGreaterThan(0);
}

describe('the rollout request bounds', () => {
  it('whatever the coordinator accepts, a worker completes; the rest is refused with a 4xx code', async () => {
    const counts = { accepted: 0, refused: 0, sdeAccepted: 0 };
    const reasons = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(body, async (candidate) => {
        let accepted: ReturnType<typeof admitRolloutRequest>;
        try {
          accepted = admitRolloutRequest(candidate, schema, DEFAULT_CARD_REGISTRY, limits);
        } catch (error) {
          expect(isFlowfleetError(error)).toBe(true);
          const code = (error as { code: ErrorCode }).code;
          expect(REFUSAL_CODES).toContain(code);
          expect(ERROR_CODES[code].httpStatus).toBeGreaterThanOrEqual(400);
          expect(ERROR_CODES[code].httpStatus).toBeLessThan(500);
          counts.refused++;
          const { details } = error as { details: Record<string, unknown> };
          const why = `${code}:${String(details['field'] ?? (details['issues'] as { path?: string }[] | undefined)?.[0]?.path ?? '')}`;
          reasons.set(why, (reasons.get(why) ?? 0) + 1);
          return;
        }
        counts.accepted++;
        if (accepted.request.sampler === 'sde') counts.sdeAccepted++;
        await completeOnWorker(accepted);
      }),
      { numRuns: 250 },
    );
    // The generator must exercise both sides (about 45 accepted, 25 of them SDE, in 250), and
    // the card's own rules must be among the refusals: the schedule bounds and the patch.
    expect(counts.accepted).toBeGreaterThan(20);
    expect(counts.sdeAccepted).toBeGreaterThan(10);
    expect(counts.refused).toBeGreaterThan(80);
    expect(reasons.get('MODEL_INVALID_REQUEST:noiseLevel')).toBeGreaterThan(5);
    expect(
      (reasons.get('MODEL_INVALID_REQUEST:shape.height') ?? 0) +
        (reasons.get('MODEL_INVALID_REQUEST:shape.width') ?? 0),
    ).toBeGreaterThan(5);
  }, 180_000);

  it('completes the edge values that used to fail on the worker once they are in range', async () => {
    const base = {
      model: 'wan21-mini',
      prompt: 'x',
      seeds: [1],
      shape: { frames: 1, height: 2, width: 2 },
    };
    for (const patch of [
      { noiseLevel: NOISE_LEVEL_RANGE.min, steps: 1 },
      { noiseLevel: NOISE_LEVEL_RANGE.max, steps: 1 },
      { shift: SHIFT_RANGE.min, sampler: 'ode', steps: limits.maxSteps },
      { shift: SHIFT_RANGE.max, steps: limits.maxSteps },
      { guidanceScale: 100, steps: limits.maxSteps },
    ]) {
      await completeOnWorker(
        admitRolloutRequest({ ...base, ...patch }, schema, DEFAULT_CARD_REGISTRY, limits),
      );
    }
  }, 120_000);
});
