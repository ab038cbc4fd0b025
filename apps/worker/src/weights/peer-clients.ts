import { FlowfleetClient } from '@flowfleet/client';
import type { FanoutPeer } from '@flowfleet/protocol';
import type { PeerRangeSource } from './tensor-fetcher.js';

/** How peers are dialled. */
export interface PeerClientsOptions {
  /** The fleet's worker-role token (peer servers check it as the coordinator does). */
  readonly token?: string | undefined;
  /** Bound on one range request, the peer's wait for a pipelined range included (default 60 s). */
  readonly timeoutMs?: number;
}

/**
 * One SDK client per peer URL (its undici pool and coded errors), with no retries: a failed
 * peer request falls back to the next source at once, which is the retry.
 */
export class PeerClients {
  readonly #options: PeerClientsOptions;
  readonly #clients = new Map<string, FlowfleetClient>();

  constructor(options: PeerClientsOptions) {
    this.#options = options;
  }

  /** The range source of `peer`. @throws FlowfleetError CLIENT_INVALID_OPTIONS (a bad URL) */
  source(peer: FanoutPeer): PeerRangeSource {
    let client = this.#clients.get(peer.peerUrl);
    if (client === undefined) {
      client = FlowfleetClient.create({
        baseUrl: peer.peerUrl,
        ...(this.#options.token === undefined ? {} : { token: this.#options.token }),
        timeoutMs: this.#options.timeoutMs ?? 60_000,
        retry: false,
      });
      this.#clients.set(peer.peerUrl, client);
    }
    const dialled = client;
    return {
      name: peer.workerId,
      fetchRange: (sha256, start, end, signal) =>
        dialled.getBlobRange(sha256, start, end, signal === undefined ? {} : { signal }),
    };
  }

  /** Closes every peer connection. Idempotent. */
  async close(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.allSettled(clients.map((client) => client.close()));
  }
}
