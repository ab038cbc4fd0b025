import { isFlowfleetError, type FlowfleetError } from '@flowfleet/errors';
import type { Fleet, SyncStatus, WeightReport } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { waitForSync, type SyncProgress, type SyncStateSource } from './wait-for-sync.js';

const SHA = 'a'.repeat(64);
const AT = new Date(0).toISOString();

function worker(workerId: string, alive: boolean): Fleet['workers'][number] {
  return {
    workerId,
    alive,
    host: 'h',
    pid: 1,
    platform: { device: 'cpu', arch: 'x86-64-v3', features: [] },
    version: '0.1.0',
    startedAt: AT,
    concurrency: 1,
    activeJobs: 0,
    lastHeartbeatAt: alive ? AT : null,
    lanes: [],
    models: [],
    weights: {},
    kernels: { available: 0, declared: 0 },
    components: { available: 0, declared: 0 },
  };
}

interface State {
  /** The newest synced version (the report's `latest`). */
  current: number | null;
  versions: Record<
    string,
    { status: WeightReport['versions'][string]['status']; acks: Record<string, SyncStatus> }
  >;
  workers: Fleet['workers'];
}

/** A source over a mutable state; records the limit asked for each time. */
function source(state: State): SyncStateSource & { limits: (number | undefined)[] } {
  const limits: (number | undefined)[] = [];
  return {
    limits,
    async weights(component, query) {
      limits.push(query?.limit);
      const versions: WeightReport['versions'] = {};
      for (const [version, entry] of Object.entries(state.versions)) {
        versions[version] = {
          sha256: SHA,
          sizeBytes: 1,
          syncedAt: AT,
          kind: 'full',
          shards: 1,
          base: null,
          holders: [],
          codes: {},
          reasons: {},
          boundLayers: {},
          fetchedBytes: {},
          sources: {},
          fallbacks: {},
          ...entry,
        };
      }
      const latest =
        state.current === null
          ? null
          : {
              version: state.current,
              status: versions[String(state.current)]?.status ?? 'pending',
            };
      return { component, current: null, latest, versions };
    },
    async fleet() {
      const live = state.workers.filter((w) => w.alive).length;
      return { live, dead: state.workers.length - live, workers: state.workers };
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<FlowfleetError> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('waitForSync', () => {
  it('resolves at minWorkers live ok acks, counting neither dead workers nor refusals', async () => {
    const state: State = {
      current: 2,
      versions: { '2': { status: 'loaded', acks: { dead: 'ok', a: 'ok', b: 'refused' } } },
      workers: [worker('a', true), worker('b', true), worker('c', true), worker('dead', false)],
    };
    const updates: SyncProgress[] = [];
    const pending = waitForSync(
      source(state),
      'dit',
      2,
      { minWorkers: 2 },
      {
        pollMs: 1,
        onUpdate: (p) => updates.push(p),
      },
    );
    await expect.poll(() => updates.length).toBeGreaterThan(0);
    expect(updates[0]?.okWorkers).toEqual(['a']);
    state.versions['2']!.acks['c'] = 'ok';
    const done = await pending;
    expect(done.okWorkers).toEqual(['a', 'c']);
    expect(done.liveWorkers).toEqual(['a', 'b', 'c']);
    expect(updates).toHaveLength(2);
  });

  it('with all: true waits for every live worker, and at least one', async () => {
    const state: State = {
      current: 1,
      versions: { '1': { status: 'pending', acks: {} } },
      workers: [],
    };
    const thrown = await failure(
      waitForSync(source(state), 'dit', 1, { all: true }, { pollMs: 1, timeoutMs: 20 }),
    );
    expect(thrown.code).toBe('CLIENT_TIMEOUT');
    state.workers = [worker('a', true), worker('b', true)];
    state.versions['1'] = { status: 'loaded', acks: { a: 'ok' } };
    const timedOut = await failure(
      waitForSync(source(state), 'dit', 1, { all: true }, { pollMs: 1, timeoutMs: 20 }),
    );
    expect(timedOut.details).toMatchObject({ last: { okWorkers: ['a'], liveWorkers: ['a', 'b'] } });
    state.versions['1'].acks['b'] = 'ok';
    expect((await waitForSync(source(state), 'dit', 1, { all: true })).okWorkers).toEqual([
      'a',
      'b',
    ]);
  });

  it('with all: true fails at once when a live worker refused the version', async () => {
    const state: State = {
      current: 1,
      versions: { '1': { status: 'loaded', acks: { a: 'ok', b: 'refused', dead: 'refused' } } },
      workers: [worker('a', true), worker('b', true), worker('dead', false)],
    };
    const refused = await failure(
      waitForSync(source(state), 'dit', 1, { all: true }, { pollMs: 1, timeoutMs: 60_000 }),
    );
    expect(refused.code).toBe('CLIENT_SYNC_FAILED');
    expect(refused.message).toMatch(/live workers refused it.*\(b: refused\)/);
    // A dead worker's refusal does not count, and minWorkers is met by the others.
    state.workers = [worker('a', true), worker('dead', false)];
    expect((await waitForSync(source(state), 'dit', 1, { all: true })).okWorkers).toEqual(['a']);
  });

  it('throws CLIENT_SYNC_FAILED for a failed or superseded version', async () => {
    const state: State = {
      current: 3,
      versions: {
        '3': { status: 'pending', acks: {} },
        '2': { status: 'superseded', acks: {} },
        '1': { status: 'failed', acks: { a: 'refused' } },
      },
      workers: [worker('a', true)],
    };
    const failed = await failure(waitForSync(source(state), 'dit', 1, { minWorkers: 1 }));
    expect(failed.code).toBe('CLIENT_SYNC_FAILED');
    expect(failed.details).toMatchObject({ status: 'failed', acks: { a: 'refused' } });
    const superseded = await failure(waitForSync(source(state), 'dit', 2, { minWorkers: 1 }));
    expect(superseded.code).toBe('CLIENT_SYNC_FAILED');
    expect(superseded.message).toMatch(/superseded by v3/);
  });

  it('throws CLIENT_UNKNOWN_VERSION for a version never synced', async () => {
    const state: State = {
      current: 1,
      versions: { '1': { status: 'loaded', acks: {} } },
      workers: [],
    };
    expect((await failure(waitForSync(source(state), 'dit', 5, { minWorkers: 1 }))).code).toBe(
      'CLIENT_UNKNOWN_VERSION',
    );
  });

  it('asks only for the versions from the current one down to the awaited one', async () => {
    const state: State = {
      current: 7,
      versions: { '5': { status: 'pending', acks: {} } },
      workers: [worker('a', true)],
    };
    const src = source(state);
    const pending = waitForSync(src, 'dit', 5, { minWorkers: 1 }, { pollMs: 1 });
    await expect.poll(() => src.limits.length).toBeGreaterThan(1);
    state.versions['5'] = { status: 'loaded', acks: { a: 'ok' } };
    await pending;
    expect(src.limits[0]).toBe(100);
    expect(src.limits[1]).toBe(3);
  });

  it.each([
    ['minWorkers 0', { minWorkers: 0 }],
    ['an empty target', {}],
  ])('refuses %s with CLIENT_INVALID_OPTIONS', async (_name, target) => {
    const state: State = { current: null, versions: {}, workers: [] };
    expect((await failure(waitForSync(source(state), 'dit', 1, target as never))).code).toBe(
      'CLIENT_INVALID_OPTIONS',
    );
  });
});
