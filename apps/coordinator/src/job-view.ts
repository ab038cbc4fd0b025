import {
  ErrorEnvelopeSchema,
  JobProgressSchema,
  errorEnvelopeOf,
  type JobProgress,
  type JobState,
  type JobView,
  type RolloutJob,
} from '@flowfleet/protocol';

/** What a view reads of a BullMQ job (BullMQ's `Job` satisfies it). */
export interface JobRecord {
  readonly timestamp: number;
  readonly attemptsMade: number;
  readonly progress?: unknown;
  readonly processedOn?: number | undefined;
  readonly finishedOn?: number | undefined;
  readonly processedBy?: string | undefined;
  readonly failedReason?: string | undefined;
}

/** BullMQ states we name; every other state (waiting, delayed, prioritized…) is `queued`. */
const NAMED_STATES: Readonly<Record<string, JobState>> = {
  active: 'active',
  completed: 'completed',
  failed: 'failed',
};

/** The API's state for a BullMQ state (a failed attempt that will be retried waits: `queued`). */
export function jobStateOf(bullState: string): JobState {
  return NAMED_STATES[bullState] ?? 'queued';
}

/** A failed job's error: the worker stores the envelope JSON as BullMQ's failedReason. */
export function errorFromFailedReason(failedReason: string | undefined): JobView['error'] {
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

function iso(epochMs: number | undefined): string | undefined {
  return epochMs === undefined || epochMs === 0 ? undefined : new Date(epochMs).toISOString();
}

/** How a job's stored payload read: the payload, or why it cannot be read. */
export type PayloadRead =
  | { readonly ok: true; readonly payload: RolloutJob }
  | { readonly ok: false; readonly error: unknown };

/**
 * The one mapping from a job's BullMQ record to what every view of it shows (its status, the
 * listing). A job whose payload cannot be read is `failed` with that error's code (or the failure
 * a worker already recorded for it), whatever BullMQ says: no worker can run it.
 */
export function jobViewOf(
  id: string,
  lane: string,
  bullState: string,
  job: JobRecord,
  read: PayloadRead,
): JobView {
  const status: JobState = read.ok ? jobStateOf(bullState) : 'failed';
  const steps = read.ok ? read.payload.request.steps : undefined;
  const reported = JobProgressSchema.safeParse(job.progress);
  const progress: JobProgress =
    status === 'completed' && steps !== undefined
      ? { step: steps, steps }
      : reported.success
        ? reported.data
        : { step: 0, steps: steps ?? 1 };
  const error =
    status !== 'failed'
      ? undefined
      : read.ok || bullState === 'failed'
        ? errorFromFailedReason(job.failedReason)
        : errorEnvelopeOf(read.error).body;
  const startedAt = iso(job.processedOn);
  const finishedAt =
    status === 'completed' || status === 'failed' ? iso(job.finishedOn) : undefined;
  return {
    id,
    lane,
    status,
    progress,
    ...(error !== undefined ? { error } : {}),
    ...(job.processedBy !== undefined && job.processedBy !== '' ? { worker: job.processedBy } : {}),
    attempts: job.attemptsMade,
    createdAt: new Date(job.timestamp).toISOString(),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(finishedAt !== undefined ? { finishedAt } : {}),
  };
}
