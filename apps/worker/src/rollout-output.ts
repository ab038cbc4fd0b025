import type { PlatformFacts } from '@flowfleet/platform';
import type { RolloutRequest, RolloutSummary } from '@flowfleet/protocol';
import { writeRolloutResult, type RolloutResult } from '@flowfleet/runtime';

/**
 * Result fields that differ between two runs of the same job on the same weights and backend
 * (wall-clock timings, and capture counters that depend on what the instance had cached).
 */
const PER_ATTEMPT_FIELDS = new Set(['timings', 'captureStats']);

/**
 * The bytes of `result.safetensors`: the runtime's rollout file without the per-attempt fields,
 * so that it is a pure function of (job, weights, backend). A retried job then uploads the same
 * bytes and the coordinator's idempotent write accepts them; the per-attempt measurements go in
 * `summary.json`.
 * @throws FlowfleetError RT_RESULT_INVALID
 */
export function deterministicResultBytes(result: RolloutResult): Uint8Array {
  const stable = Object.fromEntries(
    Object.entries(result).filter(([field]) => !PER_ATTEMPT_FIELDS.has(field)),
  );
  return writeRolloutResult(stable as unknown as RolloutResult);
}

/** The backend that ran the forwards: one source, or `component=source` pairs when mixed. */
export function backendName(backend: Readonly<Record<string, string>>): string {
  const sources = [...new Set(Object.values(backend))].sort();
  if (sources.length <= 1) return sources[0] ?? 'unknown';
  return Object.keys(backend)
    .sort()
    .map((component) => `${component}=${backend[component]}`)
    .join(',');
}

/** Who ran a rollout. */
export interface RolloutRunner {
  readonly workerId: string;
  readonly facts: PlatformFacts;
}

/**
 * The JSON summary of a finished rollout (protocol's RolloutSummary): the request's sampling
 * settings, the schedule, per-sample log-probs, the weight versions used, who ran it and how long
 * it took.
 */
export function summarizeRollout(
  id: string,
  request: RolloutRequest,
  result: RolloutResult,
  runner: RolloutRunner,
): RolloutSummary {
  const { steps, group } = result;
  const sigmas = Array.from(result.sigmas);
  const logProbs = Array.from({ length: group }, (_, sample) =>
    result.sampler === 'sde'
      ? Array.from({ length: steps }, (__, step) => result.logProbs[step * group + sample] ?? 0)
      : [],
  );
  const { facts } = runner;
  const stats = result.captureStats;
  return {
    id,
    model: result.model,
    prompt: result.prompt,
    seeds: [...result.seeds],
    steps,
    sampler: result.sampler,
    guidanceScale: result.guidanceScale,
    noiseLevel: result.noiseLevel,
    shift: result.shift ?? request.shift,
    shape: { ...request.shape },
    sigmas,
    timesteps: sigmas.map((sigma) => 1000 * sigma),
    logProbs,
    weights: { ...result.weightsVersions },
    worker: runner.workerId,
    platform: {
      device: facts.device,
      arch: facts.arch,
      features: [...facts.features],
      ...(facts.cpuArch === undefined ? {} : { cpuArch: facts.cpuArch }),
    },
    backend: backendName(result.backend),
    timings: { totalMs: result.timings.totalMs, perStepMs: [...result.timings.stepMs] },
    captureStats: {
      captures: stats.captures,
      replays: stats.replays,
      eagerBreaks: stats.eagerBreaks,
      evictions: stats.evictions,
      liveGraphs: stats.liveGraphs,
      bytesHeld: stats.bytesHeld,
    },
  };
}
