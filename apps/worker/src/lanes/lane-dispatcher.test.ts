import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ConcurrencyGate } from './concurrency-gate.js';
import { LaneDispatcher, type FetchableLane } from './lane-dispatcher.js';

interface FakeJob {
  readonly lane: string;
  readonly n: number;
  finish(): void;
}

/** A lane backed by an in-memory list; each job runs until the test finishes it. */
function fakeLane(name: string, count: number, log: string[]): FetchableLane<FakeJob> {
  let next = 0;
  return {
    lane: name,
    async fetch() {
      if (next >= count) return undefined;
      const n = next++;
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      return { lane: name, n, finish: () => finish(), done } as FakeJob & { done: Promise<void> };
    },
    async process(job) {
      log.push(`start ${job.lane}#${job.n}`);
      await (job as FakeJob & { done: Promise<void> }).done;
      log.push(`end ${job.lane}#${job.n}`);
    },
  };
}

function harness(limit: number, lanes: FetchableLane<FakeJob>[]) {
  const gate = new ConcurrencyGate(limit);
  let wake: () => void = () => {};
  const dispatcher = new LaneDispatcher<FakeJob>({
    gate,
    lanes: () => lanes,
    // Sleeps until woken: the test controls every step, no timers.
    waitForWork: () => new Promise<void>((resolve) => (wake = resolve)),
    wake: () => wake(),
    pollIntervalMs: 60_000,
    logger: pino({ level: 'silent' }),
  });
  return { gate, dispatcher };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

describe('LaneDispatcher', () => {
  it('runs at most `limit` jobs across all lanes and takes lanes in turn', async () => {
    const log: string[] = [];
    const running: FakeJob[] = [];
    const lanes = ['a', 'b', 'c'].map((name) => {
      const lane = fakeLane(name, 2, log);
      const process = lane.process.bind(lane);
      return {
        ...lane,
        process: (job: FakeJob, computed: () => void) => {
          running.push(job);
          return process(job, computed);
        },
      };
    });
    const { gate, dispatcher } = harness(2, lanes);
    dispatcher.start();
    await until(() => running.length === 2);
    expect(log).toEqual(['start a#0', 'start b#0']);
    expect(dispatcher.activeJobs).toBe(2);
    for (let i = 0; i < 4; i++) {
      running[i]?.finish();
      await until(() => running.length === i + 3);
      expect(gate.active).toBeLessThanOrEqual(2);
    }
    running[4]?.finish();
    running[5]?.finish();
    await until(() => dispatcher.activeJobs === 0);
    expect(log.filter((line) => line.startsWith('start'))).toEqual([
      'start a#0',
      'start b#0',
      'start c#0',
      'start a#1',
      'start b#1',
      'start c#1',
    ]);
    expect(gate.highWater).toBe(2);
    await dispatcher.stop();
  });

  it('gives the slot back when a lane has nothing or fails, and stops cleanly', async () => {
    const failing: FetchableLane<FakeJob> = {
      lane: 'bad',
      fetch: () => Promise.reject(new Error('redis down')),
      process: () => Promise.resolve(),
    };
    const { gate, dispatcher } = harness(1, [failing, fakeLane('empty', 0, [])]);
    dispatcher.start();
    await new Promise((r) => setImmediate(r));
    expect(gate.active).toBe(0);
    await dispatcher.stop();
    expect(await dispatcher.drain(10)).toBe(true);
  });

  it('gives a slot to the next job when a compute is over, holding at most 2 × limit jobs', async () => {
    const log: string[] = [];
    const lane = fakeLane('a', 4, log);
    const held: FakeJob[] = [];
    // Each job's compute ends at once; it then stays held (storing its result) until finished.
    const { gate, dispatcher } = harness(1, [
      {
        ...lane,
        process: (job, computed) => {
          held.push(job);
          const done = lane.process(job, computed);
          computed();
          return done;
        },
      },
    ]);
    dispatcher.start();
    await until(() => held.length === 2);
    // Two held (one slot's compute + one finishing), none computing: the third waits.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(held).toHaveLength(2);
    expect(dispatcher.heldJobs).toBe(2);
    expect(dispatcher.activeJobs).toBe(0);
    expect(gate.active).toBe(0);
    held[0]?.finish();
    await until(() => held.length === 3);
    expect(log.slice(0, 4)).toEqual(['start a#0', 'start a#1', 'end a#0', 'start a#2']);
    expect(gate.highWater).toBe(1);
    held[1]?.finish();
    held[2]?.finish();
    await until(() => held.length === 4);
    held[3]?.finish();
    expect(await dispatcher.drain(1_000)).toBe(true);
    await dispatcher.stop();
  });

  it('drain reports false while a job outlives the bound', async () => {
    const log: string[] = [];
    const lane = fakeLane('slow', 1, log);
    let job: FakeJob | undefined;
    const { dispatcher } = harness(1, [
      { ...lane, process: (j, computed) => ((job = j), lane.process(j, computed)) },
    ]);
    dispatcher.start();
    await until(() => job !== undefined);
    await dispatcher.stop();
    expect(await dispatcher.drain(20)).toBe(false);
    job?.finish();
    expect(await dispatcher.drain(1_000)).toBe(true);
  });
});
