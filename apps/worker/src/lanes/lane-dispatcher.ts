import type { Logger } from 'pino';
import type { ConcurrencyGate } from './concurrency-gate.js';

/** One served lane as the dispatcher sees it (a plain object in tests). */
export interface FetchableLane<J> {
  readonly lane: string;
  /** Takes the next waiting job, or undefined when there is none. */
  fetch(): Promise<J | undefined>;
  /**
   * Runs the job to its end (completed, failed, or handed back). `computed()` says its compute is
   * over (what is left is storing the result): its slot then goes to the next job, so the upload
   * overlaps the next rollout.
   */
  process(job: J, computed: () => void): Promise<void>;
}

/** What the dispatcher needs. */
export interface LaneDispatcherOptions<J> {
  readonly gate: ConcurrencyGate;
  /** The lanes served now (they can grow while it runs). */
  readonly lanes: () => readonly FetchableLane<J>[];
  /** Sleeps until work may be waiting, or at most `timeoutMs`. */
  readonly waitForWork: (timeoutMs: number) => Promise<void>;
  /** Makes a pending `waitForWork` return (a slot freed up, close). */
  readonly wake: () => void;
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Called whenever a job starts or settles (the heartbeat shows the load). */
  readonly onLoadChange?: () => void;
}

/**
 * The worker's one fetch loop over every lane it serves, under the process-wide gate: it takes a
 * slot, then asks the lanes in turn (starting after the last one that yielded a job, so lanes
 * share the worker fairly) for a job; with a job it starts it and looks for more, without one it
 * gives the slot back and sleeps until the queue says work may be waiting, a wake-up or the poll
 * interval. A job's slot goes back to the turn-taking when its compute is over, so no lane
 * starves and a result upload overlaps the next rollout; at most `gate.limit` more jobs may be
 * finishing (storing results) beside the ones computing, so a slow coordinator holds back fetching
 * instead of piling up results in memory.
 */
export class LaneDispatcher<J> {
  readonly #options: LaneDispatcherOptions<J>;
  readonly #inFlight = new Set<Promise<void>>();
  #computing = 0;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #cursor = 0;

  constructor(options: LaneDispatcherOptions<J>) {
    this.#options = options;
  }

  /** Jobs computing now (not counting those only storing their results). */
  get activeJobs(): number {
    return this.#computing;
  }

  /** Jobs held now: computing, or storing their results. */
  get heldJobs(): number {
    return this.#inFlight.size;
  }

  /** Starts the fetch loop. */
  start(): void {
    this.#loop ??= this.#run().catch((error: unknown) =>
      this.#options.logger.fatal({ err: error }, 'the fetch loop died'),
    );
  }

  /** Stops fetching and waits for the loop to exit (running jobs go on). Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#options.gate.interrupt();
    this.#options.wake();
    await this.#loop;
  }

  /** Resolves when every running job has settled, or after `timeoutMs`; true when all settled. */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const settled = (async () => {
      while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
      return true as const;
    })();
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #run(): Promise<void> {
    const { gate, pollIntervalMs, waitForWork } = this.#options;
    while (!this.#stopped) {
      await gate.whenAvailable();
      if (this.#stopped) break;
      if (this.#inFlight.size >= 2 * gate.limit) {
        // Every finishing slot is taken: wait for a result to be stored (a settle wakes us).
        await waitForWork(pollIntervalMs);
        continue;
      }
      const outcome = await this.#fetchOne();
      if (this.#stopped) break;
      if (outcome === 'started') continue;
      await waitForWork(outcome === 'error' ? Math.min(pollIntervalMs, 1_000) : pollIntervalMs);
    }
  }

  /** Tries each lane once, starting at the cursor; starts the first job found. */
  async #fetchOne(): Promise<'started' | 'idle' | 'error'> {
    const { gate, logger } = this.#options;
    const lanes = this.#options.lanes();
    let outcome: 'idle' | 'error' = 'idle';
    for (let i = 0; i < lanes.length && !this.#stopped; i++) {
      const index = (this.#cursor + i) % lanes.length;
      const lane = lanes[index];
      if (lane === undefined || !gate.tryAcquire()) break;
      let job: J | undefined;
      try {
        job = await lane.fetch();
      } catch (error) {
        gate.release();
        logger.warn({ err: error, lane: lane.lane }, 'fetching a job failed');
        outcome = 'error';
        continue;
      }
      if (job === undefined) {
        gate.release();
        continue;
      }
      this.#cursor = (index + 1) % lanes.length;
      this.#start(lane, job);
      return 'started';
    }
    return outcome;
  }

  #start(lane: FetchableLane<J>, job: J): void {
    const { gate, logger, onLoadChange, wake } = this.#options;
    let computing = true;
    const computed = (): void => {
      if (!computing) return;
      computing = false;
      this.#computing -= 1;
      gate.release();
      onLoadChange?.();
      wake();
    };
    const running: Promise<void> = Promise.resolve()
      .then(() => lane.process(job, computed))
      .catch((error: unknown) =>
        logger.error({ err: error, lane: lane.lane }, 'processing a job failed'),
      )
      .finally(() => {
        this.#inFlight.delete(running);
        computed();
        wake();
      });
    this.#computing += 1;
    this.#inFlight.add(running);
    onLoadChange?.();
  }
}
