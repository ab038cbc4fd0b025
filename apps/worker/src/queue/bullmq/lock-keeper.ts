import type { Logger } from 'pino';

/** What the keeper renews locks through (a BullMQ Worker's public `extendJobLocks`). */
export interface LockRenewer {
  /** Extends each job's lock to `durationMs` from now; answers the ids it could not extend. */
  extendJobLocks(jobIds: string[], tokens: string[], durationMs: number): Promise<string[]>;
}

/** What a lock keeper needs. */
export interface LockKeeperOptions {
  readonly renewer: LockRenewer;
  readonly lockDurationMs: number;
  readonly lane: string;
  readonly logger: Logger;
}

/**
 * Keeps the locks of one lane's held jobs alive: every quarter of the lock duration, one batched
 * `extendJobLocks` for all of them (it also takes them off BullMQ's stalled set), so a lock lapses
 * only when this process stops running, never because a job is long. The timer runs only while
 * something is held. A renewal that fails is logged: the job's owner finds out when it settles.
 */
export class LockKeeper {
  readonly #options: LockKeeperOptions;
  readonly #tokens = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #closed = false;

  constructor(options: LockKeeperOptions) {
    this.#options = options;
  }

  /** Starts keeping `jobId`'s lock (taken under `token`). */
  track(jobId: string, token: string): void {
    if (this.#closed) return;
    this.#tokens.set(jobId, token);
    this.#schedule();
  }

  /** Stops keeping `jobId`'s lock (it settled). */
  untrack(jobId: string): void {
    this.#tokens.delete(jobId);
    if (this.#tokens.size === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Stops renewing for good and waits for a renewal in flight. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#tokens.clear();
    await this.#renewing;
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined || this.#tokens.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#renewing = this.#renew().finally(() => {
        this.#renewing = undefined;
        this.#schedule();
      });
    }, this.#options.lockDurationMs / 4);
  }

  async #renew(): Promise<void> {
    const { renewer, lockDurationMs, lane, logger } = this.#options;
    const ids = [...this.#tokens.keys()];
    if (ids.length === 0) return;
    const tokens = ids.map((id) => this.#tokens.get(id) ?? '');
    try {
      const failed = await renewer.extendJobLocks(ids, tokens, lockDurationMs);
      if (failed.length > 0) logger.warn({ jobIds: failed, lane }, 'could not renew job locks');
    } catch (error) {
      logger.warn({ err: error, jobIds: ids, lane }, 'could not renew job locks');
    }
  }
}
