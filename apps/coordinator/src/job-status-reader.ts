import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { RolloutSummarySchema, type RolloutSummary } from '@flowfleet/formats';
import {
  errorEnvelopeOf,
  parseOrThrow,
  type FleetLimits,
  type JobStatus,
} from '@flowfleet/protocol';
import type { BlobStore } from './blob-store.js';
import { jobViewOf } from './job-view.js';
import type { LaneQueues } from './lane-queues.js';
import { readStoredJob, type StoredJob } from './stored-job.js';

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Reads of a job that keeps moving before its state and record are taken as they stand. */
const CONSISTENT_READ_ATTEMPTS = 3;

/**
 * Reports a job's status from BullMQ (state, progress, attempts) and the blob store (summary):
 * queued | active | completed | failed, with `progress {step, steps}`. Stored data that cannot
 * be read (payload, summary) makes the job `failed` with `PROTO_INVALID_JOB`, never an error.
 */
export class JobStatusReader {
  readonly #queues: LaneQueues;
  readonly #blobs: BlobStore;
  readonly #limits: FleetLimits;

  constructor(queues: LaneQueues, blobs: BlobStore, limits: FleetLimits) {
    this.#queues = queues;
    this.#blobs = blobs;
    this.#limits = limits;
  }

  /**
   * The status of job `id` on `lane`.
   * @throws FlowfleetError `API_JOB_NOT_FOUND` when the queue no longer holds the job and no
   * readable result was stored.
   */
  async status(id: string, lane: string): Promise<JobStatus> {
    const { state, stored } = await this.#read(lane, id);
    if (stored === undefined) {
      // Past BullMQ's retention the stored result still answers.
      const summary = await this.#summaryOrUndefined(id);
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
    const view = jobViewOf(id, lane, state, stored.job, stored.read);
    if (view.status !== 'completed') return view;
    try {
      return { ...view, summary: await this.#completedSummary(id, stored) };
    } catch (error) {
      if (!isFlowfleetError(error, 'PROTO_INVALID_JOB')) throw error;
      // Completed, but what it stored cannot be read: no result a trainer could use.
      return { ...view, status: 'failed', error: errorEnvelopeOf(error).body };
    }
  }

  /** The stored summary, else the job's return value. @throws PROTO_INVALID_JOB */
  async #completedSummary(id: string, stored: StoredJob): Promise<RolloutSummary> {
    return (
      (await this.summary(id)) ??
      parseOrThrow(
        RolloutSummarySchema,
        stored.job.returnvalue,
        'PROTO_INVALID_JOB',
        `summary of completed job ${id}`,
      )
    );
  }

  /** The stored summary; an unreadable one counts as none (the job is past its retention). */
  async #summaryOrUndefined(id: string): Promise<RolloutSummary | undefined> {
    try {
      return await this.summary(id);
    } catch (error) {
      if (isFlowfleetError(error, 'PROTO_INVALID_JOB')) return undefined;
      throw error;
    }
  }

  /**
   * The job's state and record, consistent with each other: the state is read before and after the
   * record and the pair is kept only when both reads agree (a job that moved in between — say
   * finished, raising its attempt count — is read again), so a status never mixes a state with a
   * record from another moment.
   */
  async #read(lane: string, id: string): Promise<{ state: string; stored: StoredJob | undefined }> {
    const queue = this.#queues.get(lane);
    let state = await queue.getJobState(id);
    for (let attempt = 1; ; attempt++) {
      const stored = state === 'unknown' ? undefined : await readStoredJob(queue, id, this.#limits);
      const after = await queue.getJobState(id);
      if (after === state || attempt >= CONSISTENT_READ_ATTEMPTS) return { state: after, stored };
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
