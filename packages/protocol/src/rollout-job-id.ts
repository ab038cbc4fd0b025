import { randomUUID } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import { isLaneName } from './requirements.js';

const JOB_ID =
  /^(lane-[0-9a-f]{16})\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A new rollout job id: its lane, a dot, a UUID (`lane-0123456789abcdef.5c7e…`): random, or the
 * enqueue's Idempotency-Key, so that a retried enqueue names the same job (BullMQ adds a job id
 * once). The id names its lane, so any coordinator finds a job's queue from the id alone, with no
 * per-job lookup record.
 * @throws FlowfleetError PROTO_INVALID_LANE when `lane` is not a lane name or `uuid` not a
 *   lowercase UUID
 */
export function newRolloutJobId(lane: string, uuid: string = randomUUID()): string {
  const id = `${lane}.${uuid}`;
  if (!isLaneName(lane) || laneOfJobId(id) !== lane) {
    throw new FlowfleetError('PROTO_INVALID_LANE', `not a lane name and UUID: ${id}`, {
      details: { lane, uuid },
    });
  }
  return id;
}

/** The lane a rollout job id names, or undefined for a string that is not a job id. */
export function laneOfJobId(id: string): string | undefined {
  return JOB_ID.exec(id)?.[1];
}
