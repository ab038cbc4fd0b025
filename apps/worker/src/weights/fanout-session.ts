import type { FlowfleetError } from '@flowfleet/errors';
import { MAX_ACK_FALLBACKS, type SyncFallback } from '@flowfleet/protocol';
import type { Logger } from 'pino';
import type { FetchObserver } from './tensor-fetcher.js';
import type { BlobRange, VerifiedRanges } from './verified-ranges.js';

/** What an ack says about where a version's bytes came from. */
export interface SourceFacts {
  readonly sources: Record<string, number>;
  readonly fallbackCount: number;
  readonly fallbacks: SyncFallback[];
}

/**
 * One load's part in the fan-out (ADR 009): it announces the ranges it will fetch (a successor's
 * request for them waits rather than fails over), hands each verified range to the peer server's
 * store, and counts the bytes per source and every fallback for the ack.
 */
export class FanoutSession implements FetchObserver {
  readonly #ranges: VerifiedRanges | undefined;
  readonly #logger: Logger;
  readonly #loads: number[] = [];
  readonly #sources: Record<string, number> = {};
  readonly #fallbacks: SyncFallback[] = [];
  #fallbackCount = 0;
  /** The blobs this load fetched ranges of (what the store keeps once the version is staged). */
  readonly shards = new Set<string>();

  constructor(ranges: VerifiedRanges | undefined, logger: Logger) {
    this.#ranges = ranges;
    this.#logger = logger;
  }

  planned(ranges: readonly BlobRange[]): void {
    for (const range of ranges) this.shards.add(range.sha256);
    if (this.#ranges !== undefined && ranges.length > 0) {
      this.#loads.push(this.#ranges.expect(ranges));
    }
  }

  verified(sha256: string, begin: number, bytes: Uint8Array, source: string): void {
    this.#ranges?.put(sha256, begin, bytes);
    this.#sources[source] = (this.#sources[source] ?? 0) + bytes.byteLength;
  }

  fellBack(peer: string, error: FlowfleetError): void {
    this.#fallbackCount += 1;
    if (this.#fallbacks.length < MAX_ACK_FALLBACKS) {
      this.#fallbacks.push({ from: peer, code: error.code, reason: error.message.slice(0, 500) });
    }
    const log = error.code === 'WORKER_PEER_RANGE_UNAVAILABLE' ? 'debug' : 'warn';
    this.#logger[log]({ peer, code: error.code }, `left peer ${peer}: ${error.message}`);
  }

  /** The load is over: ranges it did not fetch are no longer awaited here. Idempotent. */
  settle(): void {
    for (const id of this.#loads.splice(0)) this.#ranges?.settle(id);
  }

  facts(): SourceFacts {
    return {
      sources: { ...this.#sources },
      fallbackCount: this.#fallbackCount,
      fallbacks: [...this.#fallbacks],
    };
  }
}
