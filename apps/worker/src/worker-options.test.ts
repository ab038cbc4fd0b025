import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOCK_SETTINGS, resolveWorkerOptions } from './worker-options.js';

const REQUIRED = { redisUrl: 'redis://r', coordinatorUrl: 'http://c/', workerId: 'w1' };

describe('resolveWorkerOptions', () => {
  it('applies the production defaults', () => {
    const options = resolveWorkerOptions(REQUIRED);
    expect(options).toMatchObject({
      coordinatorUrl: 'http://c',
      prefix: 'ff',
      concurrency: 1,
      backend: 'auto',
      ortThreads: 1,
      models: ['wan21-mini'],
      locks: DEFAULT_LOCK_SETTINGS,
    });
    expect(options.locks.maxStalledCount).toBeGreaterThanOrEqual(3);
    // Renewal runs every lockDuration/4, far inside the lock, and a dead worker's job is found
    // within lockDuration + stalledInterval.
    expect(options.locks.stalledIntervalMs).toBeLessThan(options.locks.lockDurationMs);
  });

  it('rejects a bad concurrency or lock setting with a coded error', () => {
    for (const bad of [
      { concurrency: 0 },
      { locks: { maxStalledCount: 0 } },
      { pollIntervalMs: 1.5 },
    ]) {
      let error: unknown;
      try {
        resolveWorkerOptions({ ...REQUIRED, ...bad });
      } catch (caught) {
        error = caught;
      }
      expect(isFlowfleetError(error, 'WORKER_INVALID_OPTION'), JSON.stringify(bad)).toBe(true);
    }
  });
});
