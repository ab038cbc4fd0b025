import { FlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import {
  JobProgressSchema,
  manifestSatisfies,
  resultMismatches,
  unmetWeights,
  type FleetLimits,
  type JobProgress,
  type RolloutJob,
  type ResolvedWeightRequirement,
  type WorkerManifest,
} from '@flowfleet/protocol';
import {
  runRollout,
  type ModelInstance,
  type RolloutRequest as RuntimeRequest,
  type RolloutResult,
  type StepObserver,
} from '@flowfleet/runtime';
import type { ResolvedSamplingRequest, TextEmbeddings } from '@flowfleet/models';
import type { Logger } from 'pino';
import type { ResultFiles, ResultUploadOutcome } from '../fleet/coordinator-client.js';
import { rolloutOutput } from './rollout-output.js';

/** The job as the runner needs it (the job queue's HeldJob satisfies it). */
export interface RunnableJob {
  readonly id?: string | undefined;
  readonly data: unknown;
  /** The lock this attempt holds the job with: its result upload carries it. */
  readonly lockToken: string;
  /** What the last attempt reported (a fresh job: nothing, or 0). */
  readonly progress?: unknown;
  reportProgress(progress: JobProgress): Promise<unknown>;
}

/** What the runner needs, each as a narrow interface. */
export interface RolloutJobRunnerOptions {
  readonly workerId: string;
  /** The fleet's published limits: payloads are validated with them, not with the defaults. */
  readonly limits: FleetLimits;
  readonly manifest: () => WorkerManifest;
  readonly instance: (model: string) => ModelInstance;
  /**
   * The text embeddings a resolved request names, fetched (once per worker: cached by sha256),
   * checked finite and decoded to float32; undefined when it names none.
   * @throws FlowfleetError WORKER_EMBEDS_INVALID
   */
  readonly textEmbeddings: (
    request: ResolvedSamplingRequest,
    signal: AbortSignal | undefined,
  ) => Promise<TextEmbeddings | undefined>;
  readonly ensureWeights: (
    component: string,
    requirement: ResolvedWeightRequirement,
    signal: AbortSignal | undefined,
  ) => Promise<void>;
  /** Stores the result files, retrying as long as its bound allows. */
  readonly putResults: (
    jobId: string,
    lockToken: string,
    files: ResultFiles,
    signal?: AbortSignal,
  ) => Promise<ResultUploadOutcome>;
  /**
   * The summary stored with a job's result, or undefined when none is: after a conflict, the
   * earlier attempt's result stands and the job completes with its summary.
   */
  readonly storedSummary: (
    jobId: string,
    signal?: AbortSignal,
  ) => Promise<RolloutSummary | undefined>;
  readonly logger: Logger;
}

/** How often a job re-checks its weights after a sync before giving up (a sync raced it). */
const MAX_WEIGHT_ROUNDS = 5;

/**
 * Runs one rollout job: validates the payload (Redis data is untrusted), checks this worker can
 * serve it, syncs the weights it requires first, runs the rollout with per-step progress, stores
 * `result.safetensors` and `summary.json` through the coordinator (idempotent), and returns the
 * summary for the queue to keep as the job's return value.
 */
export class RolloutJobRunner {
  readonly #options: RolloutJobRunnerOptions;

  constructor(options: RolloutJobRunnerOptions) {
    this.#options = options;
  }

  /**
   * @throws FlowfleetError PROTO_INVALID_JOB, WORKER_JOB_UNSERVABLE, WORKER_WEIGHTS_UNAVAILABLE,
   *   WORKER_RESULT_UPLOAD_FAILED, WORKER_RESULT_CONFLICT, RT_* from the runtime
   */
  async run(
    lane: string,
    job: RunnableJob,
    signal?: AbortSignal,
    computed?: () => void,
  ): Promise<RolloutSummary> {
    const data = await this.#validate(lane, job);
    const logger = this.#options.logger.child({ jobId: data.id, lane });
    const { request } = data;
    const instance = this.#options.instance(request.model);
    // The worker's edge: the card's rules on the payload (the coordinator stored the card's
    // resolved request, so this restates it; a bad payload fails here, before any fetch).
    const resolved = instance.card.resolveRequest(request);
    const progress = new ProgressReporter(job, resolved.steps, logger);
    // A fresh job already shows step 0; a retried one still shows where the last attempt got.
    const left = JobProgressSchema.safeParse(job.progress);
    if (left.success && left.data.step > 0) progress.report(0);
    const textEmbeddings = await this.#options.textEmbeddings(resolved, signal);
    const result = await this.#runOnRequiredWeights(
      instance,
      data,
      textEmbeddings,
      progress,
      signal,
    );
    // The compute is over: the next job may start while this one's result is stored.
    computed?.();
    const { result: resultBytes, summary } = rolloutOutput(data.id, result, this.#options.workerId);
    // The upload goes to the coordinator, progress to Redis: neither waits for the other (a slow
    // or cut Redis link does not hold the result back), and the job completes after both.
    const [stored] = await Promise.all([
      this.#store(data, job.lockToken, resultBytes, summary, logger, signal),
      progress.flush(),
    ]);
    logger.info(
      { weights: stored.weightsVersions, totalMs: Math.round(summary.timings.totalMs) },
      'rollout completed',
    );
    return stored;
  }

  async #validate(lane: string, job: RunnableJob): Promise<RolloutJob> {
    const data = await this.#options.limits.parseJob(job.data);
    if (data.lane !== lane || (job.id !== undefined && data.id !== job.id)) {
      throw new FlowfleetError(
        'WORKER_JOB_UNSERVABLE',
        `job ${String(job.id)} names lane ${data.lane} and id ${data.id} but sits in lane ${lane}`,
        { details: { lane, payloadLane: data.lane, jobId: job.id ?? null, payloadId: data.id } },
      );
    }
    const verdict = manifestSatisfies(this.#options.manifest(), data.requirements);
    if (!verdict.ok) {
      throw new FlowfleetError(
        'WORKER_JOB_UNSERVABLE',
        `worker ${this.#options.workerId} does not satisfy job ${data.id}: ${verdict.reasons.join('; ')}`,
        { details: { workerId: this.#options.workerId, reasons: verdict.reasons } },
      );
    }
    return data;
  }

  /**
   * Syncs until the instance holds what the job requires, then starts the rollout in the same
   * tick as the last check: `runRollout` pins the current versions synchronously, so a sync
   * landing afterwards cannot change the weights this rollout uses.
   */
  async #runOnRequiredWeights(
    instance: ModelInstance,
    data: RolloutJob,
    textEmbeddings: TextEmbeddings | undefined,
    progress: ProgressReporter,
    signal: AbortSignal | undefined,
  ): Promise<RolloutResult> {
    // What the coordinator resolved at enqueue (a maxStaleness is a min by now).
    const required = data.weights;
    for (let round = 0; ; round++) {
      const held = Object.fromEntries(
        instance.componentIds.map((id) => [id, instance.currentVersion(id)]),
      );
      const unmet = unmetWeights(held, required);
      if (unmet.length === 0) {
        const result = await runRollout(
          instance,
          this.#runtimeRequest(data, textEmbeddings, progress, signal),
        );
        const after = unmetWeights(result.record.metadata.weightsVersions, required);
        if (after.length > 0) {
          throw new FlowfleetError(
            'WORKER_WEIGHTS_UNAVAILABLE',
            'the rollout ran on other weights',
            {
              details: { unmet: after },
            },
          );
        }
        return result;
      }
      if (round >= MAX_WEIGHT_ROUNDS) {
        throw new FlowfleetError(
          'WORKER_WEIGHTS_UNAVAILABLE',
          `job ${data.id}: weights still unmet after ${round} syncs`,
          { details: { unmet } },
        );
      }
      for (const { component, required: requirement } of unmet) {
        await this.#options.ensureWeights(component, requirement, signal);
      }
    }
  }

  /** The stored request as the runtime takes it: the same fields, plus how this process runs it. */
  #runtimeRequest(
    data: RolloutJob,
    textEmbeddings: TextEmbeddings | undefined,
    progress: ProgressReporter,
    signal: AbortSignal | undefined,
  ): RuntimeRequest {
    const observer: StepObserver = {
      name: 'job-progress',
      onStep: (step) => {
        if (step.kind === 'denoise') progress.report(step.index + 1);
      },
    };
    return {
      ...data.request,
      ...(textEmbeddings === undefined ? {} : { textEmbeddings }),
      observers: [observer],
      ...(signal === undefined ? {} : { signal }),
    };
  }

  /**
   * Stores the result and answers the summary the job completes with: this attempt's, or — when an
   * earlier attempt of the same job stored a different result (it ran on other weights, say a job
   * with no pinned version retried after a sync, or on another backend) — the earlier one's,
   * which stands: the job is answered once, by the first result stored.
   * @throws FlowfleetError WORKER_RESULT_CONFLICT when a different result is stored without a
   *   summary (its attempt died between the two writes), or with one that does not describe this
   *   job's request (never adopted: protocol's `resultMismatches`)
   */
  async #store(
    job: RolloutJob,
    lockToken: string,
    resultBytes: Uint8Array,
    summary: RolloutSummary,
    logger: Logger,
    signal: AbortSignal | undefined,
  ): Promise<RolloutSummary> {
    const files: ResultFiles = {
      summary: new TextEncoder().encode(JSON.stringify(summary)),
      result: resultBytes,
    };
    const jobId = job.id;
    const outcome = await this.#options.putResults(jobId, lockToken, files, signal);
    // A summary differs per attempt (worker, timings): after an identical result, the first one
    // stored stands.
    if (outcome === 'unchanged') logger.info('an earlier attempt had stored the same result');
    if (outcome !== 'conflict') return summary;
    const conflict = new FlowfleetError(
      'WORKER_RESULT_CONFLICT',
      `job ${jobId} already has a different result.safetensors (an earlier attempt ran on other weights or another backend)`,
      { details: { jobId, weights: summary.weightsVersions, backend: summary.backend } },
    );
    const earlier = await this.#options.storedSummary(jobId, signal);
    if (earlier === undefined) throw conflict;
    // The coordinator checks every upload, but a stored summary is adopted only when it is
    // this job's (defence in depth: a blob store written around the API, an older coordinator).
    const mismatches = resultMismatches(job, earlier);
    if (mismatches.length > 0) {
      throw new FlowfleetError(
        'WORKER_RESULT_CONFLICT',
        `job ${jobId} has a stored result that does not describe its request (${mismatches.map((m) => m.field).join(', ')}); it is not adopted`,
        { details: { jobId, mismatches }, cause: conflict },
      );
    }
    logger.warn(
      {
        err: conflict,
        code: conflict.code,
        storedWeights: earlier.weightsVersions,
        storedBy: earlier.worker,
      },
      'a different result of this job is stored; it stands, and the job completes with its summary',
    );
    return earlier;
  }
}

/**
 * Reports `{step, steps}` to the queue in order, without making the rollout wait for Redis; a failed
 * update is logged (progress is advisory, the result is not).
 */
class ProgressReporter {
  readonly #job: RunnableJob;
  readonly #steps: number;
  readonly #logger: Logger;
  #chain: Promise<void> = Promise.resolve();

  constructor(job: RunnableJob, steps: number, logger: Logger) {
    this.#job = job;
    this.#steps = steps;
    this.#logger = logger;
  }

  report(step: number): void {
    const progress: JobProgress = { step: Math.min(step, this.#steps), steps: this.#steps };
    this.#chain = this.#chain.then(async () => {
      try {
        await this.#job.reportProgress(progress);
      } catch (error) {
        this.#logger.warn({ err: error, progress }, 'could not report progress');
      }
    });
  }

  flush(): Promise<void> {
    return this.#chain;
  }
}
