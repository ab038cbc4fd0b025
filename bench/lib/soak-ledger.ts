// The soak's book of jobs: keeps a number of rollouts in flight, waits for each, reads its result
// and checks it against the first result of the same (seed, weight version) — a rollout is a pure
// function of job, weights and backend, so any difference is a mismatch. Completions seen on the
// lane's event stream are counted per job: more than one is a duplicate.
import { createHash } from 'node:crypto';
import type { FlowfleetClient } from '@flowfleet/client';

/** A job that was accepted. */
interface Accepted {
  readonly id: string;
  readonly seed: number;
}

/** What the soak reports about its jobs. */
export interface LedgerOutcome {
  readonly accepted: number;
  readonly completed: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly mismatched: number;
  /** Jobs that ended failed (they count as lost too). */
  readonly failed: number;
}

/** Seeds cycle through a small set so every (seed, version) is computed several times. */
const SEEDS = 6;

/** One rollout fenced to exactly `version` (on-policy, as a FlowGRPO round is). */
function rollout(seed: number, version: number): Parameters<FlowfleetClient['enqueueRollouts']>[0] {
  return {
    model: 'wan21-mini',
    prompt: 'a red fox in the snow',
    seeds: [seed],
    steps: 2,
    shape: { frames: 1, height: 8, width: 8 },
    weights: { dit: { exact: version } },
  };
}

export class SoakLedger {
  readonly #client: FlowfleetClient;
  readonly #pending = new Map<string, Promise<void>>();
  readonly #completions = new Map<string, number>();
  readonly #reference = new Map<string, string>();
  #accepted = 0;
  #completed = 0;
  #mismatched = 0;
  #failed = 0;
  #serial = 0;

  constructor(client: FlowfleetClient) {
    this.#client = client;
  }

  get completed(): number {
    return this.#completed;
  }

  /** Called for every `completed` event of the lane. */
  countCompletion(jobId: string): void {
    this.#completions.set(jobId, (this.#completions.get(jobId) ?? 0) + 1);
  }

  /** Enqueues one rollout on `version` (tracked until it ends); resolves with its id and lane. */
  async submitOne(version: number): Promise<{ id: string; lane: string }> {
    const seed = 1 + (this.#serial++ % SEEDS);
    const enqueued = await this.#client.enqueueRollouts(rollout(seed, version));
    this.#accepted += 1;
    const job: Accepted = { id: enqueued.id, seed };
    this.#pending.set(
      job.id,
      this.#follow(job).finally(() => this.#pending.delete(job.id)),
    );
    return enqueued;
  }

  /**
   * Runs rounds while `go()` holds, as a trainer does: `before()` (a weight sync when one is due)
   * resolves the version, then `size` rollouts fenced to it, then waits for all of them.
   */
  async rounds(size: number, go: () => boolean, before: () => Promise<number>): Promise<void> {
    while (go()) {
      const version = await before();
      for (let i = 0; i < size; i++) await this.submitOne(version);
      await Promise.allSettled(this.#pending.values());
    }
  }

  /** Waits (up to `timeoutMs`) for what is still in flight; then the outcome. */
  async drain(timeoutMs: number): Promise<LedgerOutcome> {
    const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([Promise.allSettled(this.#pending.values()), deadline]);
    const duplicated = [...this.#completions.values()].filter((n) => n > 1).length;
    return {
      accepted: this.#accepted,
      completed: this.#completed,
      lost: this.#accepted - this.#completed,
      duplicated,
      mismatched: this.#mismatched,
      failed: this.#failed,
    };
  }

  async #follow(job: Accepted): Promise<void> {
    let status: Awaited<ReturnType<FlowfleetClient['waitFor']>>;
    try {
      status = await this.#client.waitFor(job.id, { timeoutMs: 600_000 });
    } catch (error) {
      // A failed job (waitFor throws for it) is lost to the trainer: counted, never hidden.
      this.#failed += 1;
      console.error(`soak: job ${job.id} did not complete: ${(error as Error).message}`);
      return;
    }
    const bytes = await this.#client.getResultBytes(job.id);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const key = `${job.seed}@${JSON.stringify(status.summary?.weightsVersions ?? {})}`;
    const reference = this.#reference.get(key);
    if (reference === undefined) this.#reference.set(key, digest);
    else if (reference !== digest) {
      this.#mismatched += 1;
      console.error(
        `soak: job ${job.id} (${key}) differs from the first result of the same inputs`,
      );
    }
    this.#completed += 1;
  }
}
