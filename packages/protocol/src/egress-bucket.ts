import { FlowfleetError } from '@flowfleet/errors';

/** Bytes a throttled body is cut into before each is paid for (so a cap is smooth, not bursty). */
const PIECE_BYTES = 64 * 1024;

/**
 * A per-process egress cap: a token bucket (the GCRA form) that response bodies pay into before
 * they are written, so every body a process sends shares `bytesPerSecond` — the coordinator's
 * blob route and a worker's peer server each own one (`FLOWFLEET_EGRESS_BYTES_PER_S`). Up to
 * `burstBytes` go out at once after an idle spell. Pure timers, no I/O.
 */
export class EgressBucket {
  readonly bytesPerSecond: number;
  readonly #burstMs: number;
  /** When the bytes paid for so far would have finished at the cap (performance.now() ms). */
  #paidUntilMs = 0;

  /** @throws FlowfleetError PROTO_INVALID_REQUEST when the rate or burst is not a positive number */
  constructor(bytesPerSecond: number, burstBytes = Math.min(bytesPerSecond / 20, 1024 * 1024)) {
    if (!(bytesPerSecond > 0) || !Number.isFinite(bytesPerSecond) || !(burstBytes >= 0)) {
      throw new FlowfleetError(
        'PROTO_INVALID_REQUEST',
        `an egress cap is a positive byte rate (got ${bytesPerSecond} B/s, burst ${burstBytes} B)`,
        { details: { bytesPerSecond, burstBytes } },
      );
    }
    this.bytesPerSecond = bytesPerSecond;
    this.#burstMs = (burstBytes / bytesPerSecond) * 1000;
  }

  /** Waits until `bytes` more may be sent under the cap (callers share the rate in order). */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    this.#paidUntilMs =
      Math.max(this.#paidUntilMs, now - this.#burstMs) + (bytes / this.bytesPerSecond) * 1000;
    const waitMs = this.#paidUntilMs - now - this.#burstMs;
    if (waitMs <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(done, waitMs);
      function done(): void {
        signal?.removeEventListener('abort', aborted);
        resolve();
      }
      function aborted(): void {
        clearTimeout(timer);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      }
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}

/**
 * `source` re-chunked into pieces of at most 64 KiB, each paid into `bucket` before it is yielded
 * (no bucket: the source as it is).
 */
export async function* throttled(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  bucket: EgressBucket | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    if (bucket === undefined) {
      yield chunk;
      continue;
    }
    for (let at = 0; at < chunk.byteLength; at += PIECE_BYTES) {
      const piece = chunk.subarray(at, Math.min(chunk.byteLength, at + PIECE_BYTES));
      await bucket.take(piece.byteLength, signal);
      yield piece;
    }
  }
}
