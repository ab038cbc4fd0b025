import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KeyedWorkQueue, type PassResult } from './work-queue.js';

const logger = pino({ level: 'silent' });

/** A pass that waits until released, recording each start. */
function gatedPasses(results: PassResult[] = []) {
  const started: string[] = [];
  const releases: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  return {
    started,
    get maxRunning() {
      return maxRunning;
    },
    release: () => releases.shift()?.(),
    process: async (key: string): Promise<PassResult> => {
      started.push(key);
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running -= 1;
      return results.shift() ?? 'settled';
    },
  };
}

describe('KeyedWorkQueue', () => {
  it('runs a key once for any number of triggers while it runs, then once more', async () => {
    const passes = gatedPasses();
    const queue = new KeyedWorkQueue({ process: passes.process, logger });
    queue.add('dit');
    queue.add('dit');
    queue.add('dit');
    await expect.poll(() => passes.started.length).toBe(1);
    passes.release();
    await expect.poll(() => passes.started.length).toBe(2);
    passes.release();
    await queue.whenIdle('dit');
    expect(passes.started).toEqual(['dit', 'dit']);
    expect(passes.maxRunning).toBe(1);
    await queue.close();
  });

  it('runs different keys concurrently, and a key again at once when a pass asks', async () => {
    const passes = gatedPasses(['again', 'settled', 'settled']);
    const queue = new KeyedWorkQueue({ process: passes.process, logger });
    queue.add('dit');
    queue.add('text_encoder');
    await expect.poll(() => passes.maxRunning).toBe(2);
    passes.release(); // dit → again
    passes.release(); // text_encoder → settled
    await expect.poll(() => passes.started.length).toBe(3);
    passes.release();
    await Promise.all([queue.whenIdle('dit'), queue.whenIdle('text_encoder')]);
    expect(passes.started).toEqual(['dit', 'text_encoder', 'dit']);
    await queue.close();
  });

  it('backs off after a failed pass, doubling, and a trigger runs it at once', async () => {
    const starts: number[] = [];
    let results: PassResult[] = ['backoff', 'backoff', 'settled'];
    const queue = new KeyedWorkQueue({
      process: async () => {
        starts.push(Date.now());
        return results.shift() ?? 'settled';
      },
      baseDelayMs: 40,
      logger,
    });
    queue.add('dit');
    await expect.poll(() => starts.length, { timeout: 2_000 }).toBe(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(35);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(75);
    // A pass that throws backs off too; a trigger during the backoff does not wait for it.
    results = [];
    const queue2 = new KeyedWorkQueue({
      process: async () => {
        starts.push(Date.now());
        if (starts.length === 4) throw new Error('boom');
        return 'settled';
      },
      baseDelayMs: 60_000,
      logger,
    });
    queue2.add('dit');
    await queue2.whenIdle('dit');
    queue2.add('dit');
    await queue2.whenIdle('dit');
    expect(starts).toHaveLength(5);
    await Promise.all([queue.close(), queue2.close()]);
  });

  it('queues nothing once closed', async () => {
    const passes = gatedPasses();
    const queue = new KeyedWorkQueue({ process: passes.process, logger });
    queue.add('dit');
    const closed = queue.close();
    passes.release();
    await closed;
    queue.add('dit');
    await queue.whenIdle('dit');
    expect(passes.started).toEqual(['dit']);
  });
});
