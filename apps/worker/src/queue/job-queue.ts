import type { JobProgress } from '@flowfleet/protocol';

/**
 * The job queue as the lane server sees it: the one seam between the worker and its queue library
 * (BullMQ today, `./bullmq/`). Every adapter passes the contract suite in
 * `test/worker/job-queue-contract.ts`; nothing outside the adapter names the library.
 *
 * Lifecycle of a job here: `take()` moves it from waiting to held under a lock only this consumer
 * owns; while held, the adapter keeps the lock alive (so a job longer than the lock duration is
 * never taken for stalled); it ends held by exactly one of `complete`, `fail` or `handBack`, or by
 * `close()` handing it back. A consumer that dies stops renewing: once the lock lapses, the
 * stalled check of any consumer of the lane moves the job back to waiting.
 */
export interface JobQueue<R> {
  /**
   * Starts consuming `lane`: its stalled jobs are checked for from now on (at once, then every
   * stalled interval). Opening a lane twice answers the same consumer.
   * @throws Error after `close()`
   */
  openLane(lane: string): Promise<LaneConsumer<R>>;
  /**
   * Resolves when a job may be waiting in an open lane, when `wake()` is called, or after
   * `timeoutMs` at the latest (whichever comes first). How early it notices new jobs is the
   * adapter's business; polling at `timeoutMs` is always correct.
   */
  waitForWork(timeoutMs: number): Promise<void>;
  /** Makes a pending (or the next) `waitForWork` return at once. */
  wake(): void;
  /** `wake()` when `lane` is open here (a job was added to it); else nothing. */
  wakeFor(lane: string): void;
  /**
   * Hands every job still held back to waiting (no attempt used), stops lock renewal and stalled
   * checks, and closes what the queue opened (never the connections it was given). Every step
   * runs even when one fails. Idempotent.
   */
  close(): Promise<void>;
}

/** One open lane. */
export interface LaneConsumer<R> {
  readonly lane: string;
  /**
   * Moves the next waiting job of the lane (first in, first out) to held, or answers undefined
   * when none is waiting or the queue is closing. Never blocks for a job to arrive.
   */
  take(): Promise<HeldJob<R> | undefined>;
}

/** How an attempt failed: `retryable` ones are retried while the job's attempts last. */
export interface JobFailure {
  /** Kept as the job's failure reason (the worker stores the error envelope JSON). */
  readonly message: string;
  readonly retryable: boolean;
}

/**
 * A job this consumer holds. Exactly one settling call succeeds; later ones reject. A settling
 * call after the lock lapsed (a partition longer than the lock: the job moved on) rejects with
 * `WORKER_JOB_LOST` and changes nothing.
 */
export interface HeldJob<R> {
  readonly id: string;
  readonly lane: string;
  /** The payload as stored: untrusted until validated. */
  readonly data: unknown;
  /** What the last attempt reported, if anything (a fresh job: undefined or 0). */
  readonly progress: unknown;
  /**
   * The token this consumer holds the job's lock with: the attempt's proof of holding, sent with
   * its result upload (the coordinator stores a result only while it is the job's lock).
   */
  readonly lockToken: string;
  /** Attempts that ended before this one (a stall or a hand-back is not an attempt). */
  readonly attemptsMade: number;
  /** Stores progress where job readers see it. */
  reportProgress(progress: JobProgress): Promise<void>;
  /** Completes the job and stores `returnValue` (JSON) with it. */
  complete(returnValue: R): Promise<void>;
  /** Ends this attempt: retried (per the job's attempts and backoff) when retryable, else failed. */
  fail(failure: JobFailure): Promise<void>;
  /** Puts the job back at the head of waiting without using an attempt (the worker is closing). */
  handBack(): Promise<void>;
}
