import { FlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import { resultMismatches, type FleetLimits, type RolloutJob } from '@flowfleet/protocol';
import type { LaneQueues } from './lane-queues.js';
import { readStoredJob } from './stored-job.js';

/** What the provenance checks read. */
export interface ResultProvenanceOptions {
  readonly queues: LaneQueues;
  /** Stored payloads are read under the fleet's published limits. */
  readonly fleetLimits: FleetLimits;
}

/**
 * The two checks a result upload passes before a byte is stored (ADR 014): it comes from the
 * attempt that holds the job (`holder`), and what it ran is what the job asked for (`answers`).
 * A worker token alone can therefore neither put a result under a queued job nor replace what a
 * running attempt will store.
 */
export class ResultProvenance {
  readonly #options: ResultProvenanceOptions;

  constructor(options: ResultProvenanceOptions) {
    this.#options = options;
  }

  /**
   * The payload of job `id` on `lane`, when `lockToken` is the job's current lock.
   * @throws FlowfleetError API_RESULT_NOT_HOLDER (no lock, or another attempt's), API_JOB_NOT_FOUND
   *   (the job is gone), PROTO_INVALID_JOB (its stored payload cannot be read: no result answers it)
   */
  async holder(lane: string, id: string, lockToken: string): Promise<RolloutJob> {
    const { queues, fleetLimits } = this.#options;
    if (!(await queues.isHeldBy(lane, id, lockToken))) {
      throw new FlowfleetError(
        'API_RESULT_NOT_HOLDER',
        `job ${id} is not held by the attempt this upload names (queued, finished, or taken over); nothing was written`,
        { details: { id } },
      );
    }
    const stored = await readStoredJob(queues.get(lane), id, fleetLimits);
    if (stored === undefined) {
      throw new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
    }
    if (!stored.read.ok) throw stored.read.error;
    return stored.read.payload;
  }

  /**
   * Checks that `summary` describes `job`'s request (protocol's `resultMismatches`).
   * @throws FlowfleetError API_RESULT_MISMATCH listing each field in `details.mismatches`
   */
  answers(job: RolloutJob, summary: RolloutSummary): void {
    const mismatches = resultMismatches(job, summary);
    if (mismatches.length === 0) return;
    throw new FlowfleetError(
      'API_RESULT_MISMATCH',
      `the result does not answer job ${job.id}: ${mismatches.map((m) => m.field).join(', ')} differ; nothing was written`,
      { details: { id: job.id, mismatches } },
    );
  }
}
