import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { FleetLimits } from '@flowfleet/protocol';
import { Job, type Queue } from 'bullmq';
import type { PayloadRead } from './job-view.js';

/** A job's BullMQ record with its payload read separately (never trusted). */
export interface StoredJob {
  /** The record; its `data` is left null (the payload is in `read`). */
  readonly job: Job;
  readonly read: PayloadRead;
}

/**
 * Reads job `id`'s record without letting its payload decide whether the record can be read:
 * BullMQ's own getJob throws on a payload that is not JSON, which would make one damaged job
 * unreadable (a 500) instead of a failed job with its code. The payload is parsed under the
 * fleet's published limits.
 * @throws whatever Redis throws; FleetLimits' read errors
 */
export async function readStoredJob(
  queue: Queue,
  id: string,
  limits: FleetLimits,
): Promise<StoredJob | undefined> {
  const json = await queue.backend.getJobData(id);
  if (json === undefined) return undefined;
  const job = Job.fromJSON(queue, { ...json, data: 'null' }, id);
  return { job, read: await readPayload(json.data, limits) };
}

async function readPayload(text: string, limits: FleetLimits): Promise<PayloadRead> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    const error = new FlowfleetError('PROTO_INVALID_JOB', 'the stored job payload is not JSON', {
      details: { issues: [{ path: [], message: 'not JSON' }] },
      cause,
    });
    return { ok: false, error };
  }
  try {
    return { ok: true, payload: await limits.parseJob(value) };
  } catch (error) {
    if (isFlowfleetError(error, 'PROTO_INVALID_JOB')) return { ok: false, error };
    throw error;
  }
}
