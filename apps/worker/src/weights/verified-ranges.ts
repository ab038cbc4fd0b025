/** A byte range of a blob: `[begin, end)` of the blob named `sha256`. */
export interface BlobRange {
  readonly sha256: string;
  readonly begin: number;
  readonly end: number;
}

/** Verified bytes of one range of a blob. */
interface Chunk {
  readonly begin: number;
  readonly end: number;
  readonly bytes: Uint8Array;
}

/** What the store can say about a range right now. */
export type RangeState = 'held' | 'pending' | 'absent';

/** How long to wait for a range (`waitFor`). */
export interface WaitOptions {
  /** Give up after this long in all. */
  readonly maxWaitMs: number;
  /**
   * While no load is in progress, a range nobody is fetching is waited for this long (a sync may
   * be about to start here: a successor can hear the sync before its predecessor does).
   */
  readonly idleGraceMs: number;
  readonly signal?: AbortSignal;
}

/** The last chunk of `chunks` (sorted by begin) that begins at or before `at`, as an index. */
function lastAtOrBefore(chunks: readonly { begin: number }[], at: number): number {
  let low = 0;
  let high = chunks.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (chunks[mid]!.begin <= at) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

/**
 * The weight bytes a worker may serve its peers (ADR 009): only ranges it verified against the
 * manifest's digests, kept per blob, plus the ranges a load in progress will fetch (so a
 * successor's request waits for them instead of failing over). A reader gets the exact bytes of a
 * range when verified chunks cover it end to end. Memory: the verified bytes of the versions it
 * retains; F32 tensors decoded from them are views of the same buffers.
 */
export class VerifiedRanges {
  readonly #chunks = new Map<string, Chunk[]>();
  readonly #pending = new Map<number, readonly BlobRange[]>();
  readonly #waiters = new Set<() => void>();
  #nextLoad = 1;

  /** Bytes of verified chunks held. */
  get heldBytes(): number {
    let total = 0;
    for (const chunks of this.#chunks.values()) {
      for (const chunk of chunks) total += chunk.end - chunk.begin;
    }
    return total;
  }

  /** Announces the ranges a load will fetch; `settle(id)` when it is over, however it ended. */
  expect(ranges: readonly BlobRange[]): number {
    const id = this.#nextLoad++;
    this.#pending.set(id, [...ranges]);
    this.#wake();
    return id;
  }

  /** A load is over: its unfetched ranges are no longer awaited. */
  settle(id: number): void {
    if (this.#pending.delete(id)) this.#wake();
  }

  /** Records verified bytes `[begin, begin + bytes.length)` of blob `sha256`. */
  put(sha256: string, begin: number, bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const chunks = this.#chunks.get(sha256) ?? [];
    const end = begin + bytes.byteLength;
    const at = lastAtOrBefore(chunks, begin);
    const same = chunks[at];
    if (same !== undefined && same.begin === begin && same.end >= end) return;
    chunks.splice(at + 1, 0, { begin, end, bytes });
    this.#chunks.set(sha256, chunks);
    this.#wake();
  }

  /** Drops every blob's chunks but those of `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const sha256 of [...this.#chunks.keys()]) {
      if (!keep.has(sha256)) this.#chunks.delete(sha256);
    }
  }

  /** The blobs it holds chunks of. */
  blobs(): Set<string> {
    return new Set(this.#chunks.keys());
  }

  /** The verified bytes of `range` as pieces in order, or undefined when they do not cover it. */
  read(range: BlobRange): Uint8Array[] | undefined {
    const chunks = this.#chunks.get(range.sha256);
    if (chunks === undefined) return undefined;
    const pieces: Uint8Array[] = [];
    let at = range.begin;
    while (at < range.end) {
      // Among the chunks starting at or before `at`, the one reaching furthest.
      let best: Chunk | undefined;
      for (let i = lastAtOrBefore(chunks, at); i >= 0; i--) {
        const chunk = chunks[i]!;
        if (chunk.end > at && (best === undefined || chunk.end > best.end)) best = chunk;
        if (best !== undefined && chunk.end <= at) break;
      }
      if (best === undefined) return undefined;
      const stop = Math.min(best.end, range.end);
      pieces.push(best.bytes.subarray(at - best.begin, stop - best.begin));
      at = stop;
    }
    return pieces;
  }

  /** Whether `range` is held, covered by held and pending ranges together, or neither. */
  state(range: BlobRange): RangeState {
    if (this.read(range) !== undefined) return 'held';
    const spans = [...this.#pending.values()]
      .flat()
      .filter((pending) => pending.sha256 === range.sha256)
      .map((pending) => ({ begin: pending.begin, end: pending.end }));
    for (const chunk of this.#chunks.get(range.sha256) ?? []) spans.push(chunk);
    spans.sort((a, b) => a.begin - b.begin);
    let at = range.begin;
    for (const span of spans) {
      if (span.begin > at) break;
      at = Math.max(at, span.end);
      if (at >= range.end) return 'pending';
    }
    return 'absent';
  }

  /**
   * The bytes of `range` once verified chunks cover it: at once when held, after waiting while it
   * is pending (or, with no load in progress, for `idleGraceMs`); undefined when it is absent or
   * the wait ran out.
   */
  async waitFor(range: BlobRange, options: WaitOptions): Promise<Uint8Array[] | undefined> {
    const started = Date.now();
    for (;;) {
      const held = this.read(range);
      if (held !== undefined) return held;
      const elapsed = Date.now() - started;
      const state = this.state(range);
      const idle = this.#pending.size === 0;
      const limitMs =
        state === 'pending'
          ? options.maxWaitMs
          : idle
            ? Math.min(options.idleGraceMs, options.maxWaitMs)
            : 0;
      if (elapsed >= limitMs || options.signal?.aborted === true) return undefined;
      await this.#changed(limitMs - elapsed, options.signal);
    }
  }

  /** Resolves on the next change (a chunk, a load announced or settled), or after `timeoutMs`. */
  #changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}
