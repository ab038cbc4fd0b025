import { FlowfleetError } from '@flowfleet/errors';
import { RolloutSummarySchema, type RolloutSummary } from '@flowfleet/formats';
import {
  ErrorEnvelopeSchema,
  JobProgressSchema,
  RolloutJobSchema,
  parseOrThrow,
  type JobProgress,
  type JobState,
  type JobStatus,
} from '@flowfleet/protocol';
import type { Job } from 'bullmq';
import type { BlobStore } from './blob-store.js';
import type { LaneQueues } from './lane-queues.js';

/** BullMQ states we name; every other state (waiting, delayed, prioritized…) is `queued`. */
const NAMED_STATES: Readonly<Record<string, JobState>> = {
  active: 'active',
  completed: 'completed',
  failed: 'failed',
};

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function iso(epochMs: number | undefined): string | undefined {
  return epochMs === undefined || epochMs === 0 ? undefined : new Date(epochMs).toISOString();
}

/** Reads of a job that keeps moving before its state and record are taken as they stand. */
const CONSISTENT_READ_ATTEMPTS = 3;

/** A failed job's error: the worker stores the envelope JSON as BullMQ's failedReason. */
export function errorFromFailedReason(failedReason: string | undefined): JobStatus['error'] {
  let value: unknown;
  try {
    value = JSON.parse(failedReason ?? '');
  } catch {
    value = undefined;
  }
  const envelope = ErrorEnvelopeSchema.safeParse(value);
  if (envelope.success) return envelope.data;
  return { code: 'INTERNAL_ERROR', message: failedReason || 'the job failed', details: {} };
}

/**
 * Reports a job's status from BullMQ (state, progress, attempts) and the blob store (summary):
 * queued | active | completed | failed, with `progress {step, steps}`.
 */
export class JobStatusReader {
  readonly #queues: LaneQueues;
  readonly #blobs: BlobStore;

  constructor(queues: LaneQueues, blobs: BlobStore) {
    this.#queues = queues;
    this.#blobs = blobs;
  }

  /**
   * The status of job `id` on `lane`.
   * @throws FlowfleetError `API_JOB_NOT_FOUND` when the queue no longer holds the job and no
   * result was stored; `PROTO_INVALID_JOB` when stored data fails its schema.
   */
  async status(id: string, lane: string): Promise<JobStatus> {
    const { state, job } = await this.#read(lane, id);
    if (job === undefined) {
      // Past BullMQ's retention the stored result still answers.
      const summary = await this.summary(id);
      if (summary === undefined) {
        throw new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
      }
      return {
        id,
        lane,
        status: 'completed',
        progress: { step: summary.steps, steps: summary.steps },
        summary,
        worker: summary.worker,
        attempts: 1,
        createdAt: new Date(0).toISOString(),
      };
    }
    const data = parseOrThrow(RolloutJobSchema, job.data, 'PROTO_INVALID_JOB', 'job payload');
    // A failed attempt that will be retried is back in `delayed`/`waiting`, hence `queued`.
    const status: JobState = NAMED_STATES[state] ?? 'queued';
    const steps = data.request.steps;
    const reported = JobProgressSchema.safeParse(job.progress);
    const progress: JobProgress =
      status === 'completed'
        ? { step: steps, steps }
        : reported.success
          ? reported.data
          : { step: 0, steps };
    const summary =
      status === 'completed'
        ? ((await this.summary(id)) ??
          parseOrThrow(
            RolloutSummarySchema,
            job.returnvalue,
            'PROTO_INVALID_JOB',
            `summary of completed job ${id}`,
          ))
        : undefined;
    const startedAt = iso(job.processedOn);
    const finishedAt =
      status === 'completed' || status === 'failed' ? iso(job.finishedOn) : undefined;
    return {
      id,
      lane,
      status,
      progress,
      ...(summary !== undefined ? { summary } : {}),
      ...(status === 'failed' ? { error: errorFromFailedReason(job.failedReason) } : {}),
      ...(job.processedBy !== undefined && job.processedBy !== ''
        ? { worker: job.processedBy }
        : {}),
      attempts: job.attemptsMade,
      createdAt: new Date(job.timestamp).toISOString(),
      ...(startedAt !== undefined ? { startedAt } : {}),
      ...(finishedAt !== undefined ? { finishedAt } : {}),
    };
  }

  /**
   * The job's state and record, consistent with each other: the state is read before and after the
   * record and the pair is kept only when both reads agree (a job that moved in between — say
   * finished, raising its attempt count — is read again), so a status never mixes a state with a
   * record from another moment.
   */
  async #read(lane: string, id: string): Promise<{ state: string; job: Job | undefined }> {
    const queue = this.#queues.get(lane);
    let state = await queue.getJobState(id);
    for (let attempt = 1; ; attempt++) {
      const job = state === 'unknown' ? undefined : ((await queue.getJob(id)) as Job | undefined);
      const after = await queue.getJobState(id);
      if (after === state || attempt >= CONSISTENT_READ_ATTEMPTS) return { state: after, job };
      state = after;
    }
  }

  /**
   * Checks an uploaded summary: JSON, RolloutFile v1's summary schema (formats), and the job's
   * own id.
   * @throws FlowfleetError `API_INVALID_BODY` listing the problems.
   */
  validateSummary(id: string, bytes: Buffer): RolloutSummary {
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (cause) {
      throw new FlowfleetError('API_INVALID_BODY', 'summary.json is not valid JSON', {
        details: { issues: [{ path: [], message: 'not JSON' }] },
        cause,
      });
    }
    const summary = parseOrThrow(RolloutSummarySchema, value, 'API_INVALID_BODY', 'summary.json');
    if (summary.id !== id) {
      throw new FlowfleetError(
        'API_INVALID_BODY',
        `summary.json is for job ${summary.id}, not ${id}`,
        {
          details: { issues: [{ path: ['id'], message: `expected ${id}` }] },
        },
      );
    }
    return summary;
  }

  /**
   * The stored summary of job `id`, or undefined when none was written.
   * @throws FlowfleetError `PROTO_INVALID_JOB` when the stored summary fails its schema.
   */
  async summary(id: string): Promise<RolloutSummary | undefined> {
    const opened = await this.#blobs.openResult(id, 'summary.json');
    if (opened === undefined) return undefined;
    const text = (await readAll(opened.stream)).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new FlowfleetError('PROTO_INVALID_JOB', `stored summary of ${id} is not JSON`, {
        details: { id },
        cause,
      });
    }
    return parseOrThrow(RolloutSummarySchema, value, 'PROTO_INVALID_JOB', `summary of ${id}`);
  }
}
