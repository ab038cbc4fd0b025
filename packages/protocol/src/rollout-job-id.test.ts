import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { IdSchema } from './atoms.js';
import { laneOfJobId, newRolloutJobId } from './rollout-job-id.js';

describe('rollout job ids', () => {
  const lane = 'lane-0123456789abcdef';

  it('name their lane, are valid ids (no ":"), and differ each time', () => {
    const a = newRolloutJobId(lane);
    const b = newRolloutJobId(lane);
    expect(a).not.toBe(b);
    expect(a.startsWith(`${lane}.`)).toBe(true);
    expect(IdSchema.safeParse(a).success).toBe(true);
    expect(laneOfJobId(a)).toBe(lane);
    expect(laneOfJobId(b)).toBe(lane);
  });

  it('give no lane for anything else', () => {
    for (const id of [
      '0f8fad5b-d9cb-469f-a165-70867728950e',
      `${lane}`,
      `${lane}.`,
      `${lane}.not-a-uuid`,
      `lane-0123.0f8fad5b-d9cb-469f-a165-70867728950e`,
      `x${lane}.0f8fad5b-d9cb-469f-a165-70867728950e`,
      `${lane}.0f8fad5b-d9cb-469f-a165-70867728950e.extra`,
    ]) {
      expect(laneOfJobId(id), id).toBeUndefined();
    }
  });

  it('refuse a lane that is not a lane name', () => {
    let error: unknown;
    try {
      newRolloutJobId('lane-XYZ');
    } catch (caught) {
      error = caught;
    }
    expect(isFlowfleetError(error, 'PROTO_INVALID_LANE')).toBe(true);
  });
});
