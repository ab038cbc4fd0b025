// Timestamps of the queue bench's jobs, all from one clock (performance.now() in this process):
// when the add was issued, when the job's work started (the raw processor's first line, or the
// no-op card's first forward), and when BullMQ reported it completed (QueueEvents, the same for
// both paths). Jobs are tagged by a number carried in their prompt.
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';

const PROMPT_PREFIX = 'job-';

/** The prompt that carries `tag` (fits the text encoder's 16 byte-tokens). */
export function promptOf(tag: number): string {
  return `${PROMPT_PREFIX}${tag}`;
}

/** The tag in a prompt, or undefined for another prompt. */
export function tagOf(prompt: string): number | undefined {
  if (!prompt.startsWith(PROMPT_PREFIX)) return undefined;
  const tag = Number(prompt.slice(PROMPT_PREFIX.length));
  return Number.isSafeInteger(tag) ? tag : undefined;
}

/** Decodes the last row of byte-level token ids [B, L] (ids ≥ 256 are padding). */
export function lastPromptOf(data: ArrayLike<number | bigint>, dims: readonly number[]): string {
  const len = dims[1] ?? 0;
  const rows = dims[0] ?? 0;
  const bytes: number[] = [];
  for (let i = (rows - 1) * len; i < rows * len; i++) {
    const id = Number(data[i]);
    if (id > 255) break;
    bytes.push(id);
  }
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

interface Waiter {
  readonly target: number;
  readonly resolve: (at: number) => void;
  readonly reject: (error: Error) => void;
}

/** Completion events of one BullMQ queue, counted as they arrive. */
export class CompletionWatch {
  readonly #events: QueueEvents;
  readonly #connection: Redis;
  readonly #doneAt = new Map<string, number>();
  #completed = 0;
  #waiter: Waiter | undefined;
  #failure: Error | undefined;

  private constructor(events: QueueEvents, connection: Redis) {
    this.#events = events;
    this.#connection = connection;
    events.on('completed', ({ jobId }) => {
      this.#doneAt.set(jobId, performance.now());
      this.#completed += 1;
      const waiter = this.#waiter;
      if (waiter !== undefined && this.#completed >= waiter.target) {
        this.#waiter = undefined;
        waiter.resolve(performance.now());
      }
    });
    events.on('failed', ({ jobId, failedReason }) => {
      this.#failure = new Error(`job ${jobId} failed: ${failedReason}`);
      this.#waiter?.reject(this.#failure);
      this.#waiter = undefined;
    });
  }

  /**
   * Starts listening on `queue` (new events only) over its own connection (QueueEvents blocks on
   * XREAD) and resolves once the reader is ready.
   */
  static async open(redisUrl: string, queue: string, bullPrefix: string): Promise<CompletionWatch> {
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const events = new QueueEvents(queue, { connection, prefix: bullPrefix });
    await events.waitUntilReady();
    return new CompletionWatch(events, connection);
  }

  /** Completed events seen so far. */
  get completed(): number {
    return this.#completed;
  }

  /** When the completed event of `jobId` arrived. */
  doneAt(jobId: string): number | undefined {
    return this.#doneAt.get(jobId);
  }

  /** Resolves (with the time) once `target` completions were seen; rejects on a failed job. */
  until(target: number, timeoutMs: number): Promise<number> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#completed >= target) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        reject(new Error(`only ${this.#completed}/${target} jobs completed in ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiter = {
        target,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  async close(): Promise<void> {
    await this.#events.close();
    this.#connection.disconnect();
  }
}

/** Stages a job passes, in order (ours: all; raw: added, enqueued, started, done). */
export const STAGES = [
  'added',
  'enqueued',
  'started',
  'computed',
  'result.safetensors',
  'summary.json',
  'done',
] as const;
/** One of STAGES. */
export type Stage = (typeof STAGES)[number];

/**
 * Stage times by tag. `added`: the add was issued; `enqueued`: the add returned; `started`: the
 * work started; `computed`: the last forward ran (stamped on the job in flight, so only in
 * one-at-a-time phases); the result files: the coordinator stored them; `done`: the completed
 * event arrived.
 */
export class JobClock {
  readonly #stamps = new Map<number, Map<Stage, number>>();
  readonly #tagOfJob = new Map<string, number>();
  readonly #jobOfTag = new Map<number, string>();
  /** Stamps for a job id whose add has not returned yet. */
  readonly #early = new Map<string, Map<Stage, number>>();
  #next = 0;
  #current: number | undefined;

  /** A fresh tag, stamped as added now (and the job in flight). */
  add(): number {
    const tag = this.#next++;
    this.#stamps.set(tag, new Map([['added', performance.now()]]));
    this.#current = tag;
    return tag;
  }

  /** Records the job id an add returned. */
  enqueued(tag: number, jobId: string): void {
    const stamps = this.#stamps.get(tag)!;
    stamps.set('enqueued', performance.now());
    this.#tagOfJob.set(jobId, tag);
    this.#jobOfTag.set(tag, jobId);
    for (const [stage, at] of this.#early.get(jobId) ?? []) stamps.set(stage, at);
    this.#early.delete(jobId);
  }

  /** Stamps `stage` of `tag` (first call wins: a retried attempt is not a new start). */
  stamp(tag: number, stage: Stage): void {
    const stamps = this.#stamps.get(tag);
    if (stamps !== undefined && !stamps.has(stage)) stamps.set(stage, performance.now());
  }

  /** Stamps `stage` of the job added last. */
  stampCurrent(stage: Stage): void {
    if (this.#current !== undefined) this.stamp(this.#current, stage);
  }

  /** Stamps `stage` of a job by its id. */
  stampJob(jobId: string, stage: Stage): void {
    const tag = this.#tagOfJob.get(jobId);
    if (tag !== undefined) this.stamp(tag, stage);
    else {
      const early = this.#early.get(jobId) ?? new Map<Stage, number>();
      if (!early.has(stage)) early.set(stage, performance.now());
      this.#early.set(jobId, early);
    }
  }

  /**
   * Per stage, the ms since the add was issued, for each of `tags` (stages a path does not stamp
   * are absent); `done` comes from `watch`.
   * @throws Error when a job has no start or completion
   */
  sinceAdded(tags: readonly number[], watch: CompletionWatch): Map<Stage, number[]> {
    const out = new Map<Stage, number[]>();
    for (const tag of tags) {
      const stamps = this.#stamps.get(tag)!;
      const jobId = this.#jobOfTag.get(tag);
      const done = jobId === undefined ? undefined : watch.doneAt(jobId);
      if (!stamps.has('started') || done === undefined) {
        throw new Error(`job tag ${tag} (${jobId ?? 'no id'}) has no start or completion time`);
      }
      stamps.set('done', done);
      const added = stamps.get('added')!;
      for (const stage of STAGES.slice(1)) {
        const at = stamps.get(stage);
        if (at !== undefined) out.set(stage, [...(out.get(stage) ?? []), at - added]);
      }
    }
    return out;
  }
}
