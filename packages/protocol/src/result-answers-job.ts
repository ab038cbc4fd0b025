import type { RolloutSummary } from '@flowfleet/formats';
import type { RolloutJob } from './rollout-job.js';
import { unmetWeights } from './weight-requirement.js';

/** One field where a result does not describe the request of the job it is stored under. */
export interface ResultMismatch {
  /** The request field, as the job payload names it (`seeds`, `prompt`, `weights.dit`, …). */
  readonly field: string;
  /** What the job asked for. */
  readonly expected: unknown;
  /** What the result says it ran. */
  readonly actual: unknown;
}

function sameSeeds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((seed, i) => seed === b[i]);
}

/**
 * The fields where `summary` does not describe `job`'s request: the model, prompts, seeds (in
 * order), steps, sampler, guidance scale and CFG rule, noise level, the schedule (the shift, or
 * null for an explicit sigma table, whose length the step count fixes), and the weight versions
 * (each must meet the job's resolved requirement). Empty when the result answers the job.
 * The one check of "this result is the job's": the coordinator runs it on every upload and the
 * worker before it adopts a stored result in place of its own.
 */
export function resultMismatches(job: RolloutJob, summary: RolloutSummary): ResultMismatch[] {
  const { request } = job;
  const mismatches: ResultMismatch[] = [];
  const expect = (field: string, expected: unknown, actual: unknown): void => {
    if (!Object.is(expected, actual)) mismatches.push({ field, expected, actual });
  };
  if (summary.id !== job.id) mismatches.push({ field: 'id', expected: job.id, actual: summary.id });
  expect('model', request.model, summary.model);
  expect('prompt', request.prompt, summary.prompt);
  expect('negativePrompt', request.negativePrompt, summary.negativePrompt);
  if (!sameSeeds(request.seeds, summary.seeds)) {
    mismatches.push({ field: 'seeds', expected: request.seeds, actual: summary.seeds });
  }
  expect('steps', request.steps, summary.steps);
  expect('sampler', request.sampler, summary.sampler);
  expect('guidanceScale', request.guidanceScale, summary.guidanceScale);
  // A file written before the key existed ran the only rule there was.
  expect('cfgRule', request.cfgRule, summary.cfgRule ?? 'unless-one');
  expect('noiseLevel', request.noiseLevel, summary.noiseLevel);
  expect('shift', request.sigmas === undefined ? request.shift : null, summary.shift);
  for (const unmet of unmetWeights(summary.weightsVersions, job.weights)) {
    mismatches.push({
      field: `weights.${unmet.component}`,
      expected: unmet.required,
      actual: unmet.held,
    });
  }
  return mismatches;
}
