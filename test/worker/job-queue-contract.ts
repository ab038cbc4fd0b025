// The contract every JobQueue adapter of the worker passes (apps/worker/src/queue/job-queue.ts):
// what the lane server and the worker's shutdown rely on, checked against a real queue. An
// adapter's test file gives a binding (how to open a consumer, kill one, enqueue and inspect a
// job) and calls `describeJobQueueContract`.
import type { LockSettings } from '@flowfleet/worker';
import type { HeldJob, JobQueue } from '@flowfleet/worker';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from './fleet-fixture.js';

/** A job as the queue stores it, read back by the binding. */
export interface InspectedJob {
  readonly state: 'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'unknown';
  readonly returnValue: unknown;
  readonly progress: unknown;
  readonly attemptsMade: number;
  readonly failedReason: string | undefined;
}

/** One fresh queue namespace (its own key prefix) for one test. */
export interface QueueFixture {
  /** A new consumer process, as far as the queue can tell (its own connections). */
  open(locks: LockSettings): Promise<JobQueue<unknown>>;
  /**
   * Makes `queue` behave like a consumer whose process died: it stops renewing locks and never
   * settles what it holds (its connections are cut), and its timers are stopped.
   */
  kill(queue: JobQueue<unknown>): Promise<void>;
  enqueue(lane: string, id: string, data: unknown, options?: { attempts?: number }): Promise<void>;
  inspect(lane: string, id: string): Promise<InspectedJob>;
  /** Closes every queue it opened and removes its keys. */
  close(): Promise<void>;
}

/** How an adapter's test binds to the contract. */
export interface JobQueueBinding {
  fixture(): Promise<QueueFixture>;
  /** True when `waitForWork` notices a job added to an open lane before its timeout. */
  readonly wakesOnNewJobs: boolean;
}

const LANE = 'lane-00000000000000c1';
/** Generous for the renewal and stall cases, short enough to keep the suite quick. */
const LOCKS: LockSettings = { lockDurationMs: 1_000, stalledIntervalMs: 250, maxStalledCount: 2 };

async function takeWithin(
  queue: JobQueue<unknown>,
  lane: string,
  timeoutMs: number,
): Promise<HeldJob<unknown>> {
  const consumer = await queue.openLane(lane);
  return waitUntil(() => consumer.take(), `a job of ${lane}`, timeoutMs);
}

/** Takes until the lane answers nothing. */
async function takeAll(queue: JobQueue<unknown>, lane: string): Promise<HeldJob<unknown>[]> {
  const consumer = await queue.openLane(lane);
  const taken: HeldJob<unknown>[] = [];
  for (let job = await consumer.take(); job !== undefined; job = await consumer.take()) {
    taken.push(job);
  }
  return taken;
}

export function describeJobQueueContract(name: string, binding: JobQueueBinding): void {
  describe(`JobQueue contract: ${name}`, () => {
    let fixture: QueueFixture;

    beforeEach(async () => {
      fixture = await binding.fixture();
    });

    afterEach(async () => {
      await fixture?.close();
    });

    it('takes jobs first in, first out, and answers nothing from an empty lane', async () => {
      const queue = await fixture.open(LOCKS);
      const consumer = await queue.openLane(LANE);
      expect(await consumer.take()).toBeUndefined();
      for (const id of ['a', 'b', 'c']) await fixture.enqueue(LANE, id, { n: id });
      const taken = await takeAll(queue, LANE);
      expect(taken.map((job) => [job.id, job.lane, job.data, job.attemptsMade])).toEqual([
        ['a', LANE, { n: 'a' }, 0],
        ['b', LANE, { n: 'b' }, 0],
        ['c', LANE, { n: 'c' }, 0],
      ]);
      for (const job of taken) expect((await fixture.inspect(LANE, job.id)).state).toBe('active');
      // Each attempt holds its job with its own token (what its result upload proves it with).
      const tokens = taken.map((job) => job.lockToken);
      expect(tokens.every((token) => token.length > 0)).toBe(true);
      expect(new Set(tokens).size).toBe(tokens.length);
      await Promise.all(taken.map((job) => job.complete(null)));
    });

    it('hands each job to one consumer only', async () => {
      const queues = await Promise.all([1, 2, 3].map(() => fixture.open(LOCKS)));
      const ids = Array.from({ length: 24 }, (_, i) => `job-${i}`);
      for (const id of ids) await fixture.enqueue(LANE, id, {});
      const taken = (await Promise.all(queues.map((queue) => takeAll(queue, LANE)))).flat();
      expect(taken.map((job) => job.id).sort()).toEqual([...ids].sort());
      await Promise.all(taken.map((job) => job.complete(null)));
    });

    it('shows progress while held, stores the return value on completion, settles once', async () => {
      const queue = await fixture.open(LOCKS);
      await fixture.enqueue(LANE, 'p', {});
      const [job] = await takeAll(queue, LANE);
      if (job === undefined) throw new Error('no job taken');
      expect(job.progress ?? 0).toEqual(0);
      await job.reportProgress({ step: 2, steps: 5 });
      expect((await fixture.inspect(LANE, 'p')).progress).toEqual({ step: 2, steps: 5 });
      await job.complete({ worker: 'w', steps: 5 });
      expect(await fixture.inspect(LANE, 'p')).toMatchObject({
        state: 'completed',
        returnValue: { worker: 'w', steps: 5 },
        attemptsMade: 1,
      });
      await expect(job.complete({})).rejects.toThrow();
      await expect(job.handBack()).rejects.toThrow();
    });

    it('retries a retryable failure while attempts last, then fails it; an unrecoverable one at once', async () => {
      const queue = await fixture.open(LOCKS);
      await fixture.enqueue(LANE, 'r', {}, { attempts: 3 });
      for (let attempt = 0; attempt < 3; attempt++) {
        const job = await takeWithin(queue, LANE, 5_000);
        expect([job.id, job.attemptsMade]).toEqual(['r', attempt]);
        await job.fail({ message: `boom ${attempt}`, retryable: true });
      }
      expect(await fixture.inspect(LANE, 'r')).toMatchObject({
        state: 'failed',
        attemptsMade: 3,
        failedReason: 'boom 2',
      });
      expect(await (await queue.openLane(LANE)).take()).toBeUndefined();

      await fixture.enqueue(LANE, 'u', {}, { attempts: 3 });
      const job = await takeWithin(queue, LANE, 5_000);
      await job.fail({ message: '{"code":"PROTO_INVALID_JOB"}', retryable: false });
      expect(await fixture.inspect(LANE, 'u')).toMatchObject({
        state: 'failed',
        attemptsMade: 1,
        failedReason: '{"code":"PROTO_INVALID_JOB"}',
      });
    });

    it('keeps the lock of a job held for longer than the lock duration', async () => {
      const holder = await fixture.open(LOCKS);
      const checker = await fixture.open(LOCKS);
      const watching = await checker.openLane(LANE); // its stalled check runs throughout
      await fixture.enqueue(LANE, 'long', {});
      const job = await takeWithin(holder, LANE, 5_000);
      const until = Date.now() + 3 * LOCKS.lockDurationMs;
      while (Date.now() < until) {
        expect(await watching.take()).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await fixture.inspect(LANE, 'long')).state).toBe('active');
      await job.complete('done');
      expect(await fixture.inspect(LANE, 'long')).toMatchObject({
        state: 'completed',
        returnValue: 'done',
      });
    });

    it('gives a killed consumer’s job to another once its lock lapses, without using an attempt', async () => {
      const doomed = await fixture.open(LOCKS);
      const rescuer = await fixture.open(LOCKS);
      await rescuer.openLane(LANE);
      await fixture.enqueue(LANE, 'k', {});
      const lost = await takeWithin(doomed, LANE, 5_000);
      await lost.reportProgress({ step: 1, steps: 4 });
      await fixture.kill(doomed);
      const bound = LOCKS.lockDurationMs + 4 * LOCKS.stalledIntervalMs + 5_000;
      const found = await takeWithin(rescuer, LANE, bound);
      expect([found.id, found.attemptsMade]).toEqual(['k', 0]);
      expect(found.progress).toEqual({ step: 1, steps: 4 });
      await found.complete('rescued');
      expect(await fixture.inspect(LANE, 'k')).toMatchObject({
        state: 'completed',
        returnValue: 'rescued',
      });
    });

    it('hands a job back to the head of waiting without using an attempt', async () => {
      const queue = await fixture.open(LOCKS);
      await fixture.enqueue(LANE, 'first', {});
      await fixture.enqueue(LANE, 'second', {});
      const consumer = await queue.openLane(LANE);
      const job = await consumer.take();
      expect(job?.id).toBe('first');
      await job?.handBack();
      expect((await fixture.inspect(LANE, 'first')).state).toBe('waiting');
      const again = await consumer.take();
      expect([again?.id, again?.attemptsMade]).toEqual(['first', 0]);
      await again?.complete(null);
    });

    it('close hands held jobs back for another consumer, and is idempotent', async () => {
      const closing = await fixture.open(LOCKS);
      await fixture.enqueue(LANE, 'held', {});
      const consumer = await closing.openLane(LANE);
      const held = await consumer.take();
      expect(held?.id).toBe('held');
      await Promise.all([closing.close(), closing.close()]);
      await closing.close();
      expect(await fixture.inspect(LANE, 'held')).toMatchObject({
        state: 'waiting',
        attemptsMade: 0,
      });
      await expect(held?.complete(null)).rejects.toThrow();
      expect(await consumer.take()).toBeUndefined();
      await expect(closing.openLane(LANE)).rejects.toThrow();
      const other = await fixture.open(LOCKS);
      const taken = await takeWithin(other, LANE, 5_000);
      expect([taken.id, taken.attemptsMade]).toEqual(['held', 0]);
      await taken.complete(null);
    });

    it('waitForWork ends at its timeout at the latest, and at once on wake()', async () => {
      const queue = await fixture.open(LOCKS);
      await queue.openLane(LANE);
      await queue.waitForWork(50); // whatever opening the lane left pending
      const started = Date.now();
      await queue.waitForWork(200);
      expect(Date.now() - started).toBeLessThan(5_000);
      const woken = queue.waitForWork(60_000);
      queue.wake();
      const outcome = await Promise.race([
        woken.then(() => 'woken'),
        new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000)),
      ]);
      expect(outcome).toBe('woken');
      if (binding.wakesOnNewJobs) {
        await queue.waitForWork(50);
        const noticing = queue.waitForWork(60_000);
        await fixture.enqueue(LANE, 'new', {});
        const noticed = await Promise.race([
          noticing.then(() => 'noticed'),
          new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000)),
        ]);
        expect(noticed).toBe('noticed');
      }
    });
  });
}
