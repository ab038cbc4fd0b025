import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from './fleet-keys.js';

describe('fleetKeys', () => {
  it('puts the control plane under {prefix} and each lane queue under its own tag', () => {
    const keys = fleetKeys('ff');
    for (const key of [
      keys.workers,
      keys.worker('w1'),
      keys.heartbeat('w1'),
      keys.lanes,
      keys.laneChannel,
      keys.laneWorkChannel,
      keys.weights('dit'),
      keys.syncChannel,
      keys.acks('dit', 3),
      keys.limits,
    ]) {
      expect(key.startsWith('{ff}:'), key).toBe(true);
    }
    expect(keys.laneBullPrefix('lane-0123456789abcdef')).toBe('{ff:lane-0123456789abcdef}:bull');
    expect(keys.laneBullPrefix('lane-a')).not.toBe(keys.laneBullPrefix('lane-b'));
  });

  it('refuses a lane that would break the tag with PROTO_INVALID_KEY', () => {
    for (const lane of ['a}b', 'a:b', '', 'a b']) {
      const error = (() => {
        try {
          fleetKeys('ff').laneBullPrefix(lane);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(isFlowfleetError(error, 'PROTO_INVALID_KEY'), lane).toBe(true);
    }
  });
});
