import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';

/** What the subscriber needs. */
export interface FleetSubscriberOptions {
  /** A dedicated connection (it enters subscriber mode). */
  readonly redis: RedisClient;
  readonly logger: Logger;
}

/**
 * One pub/sub connection for the fleet's channels (lanes, syncs), subscribed one by one as the
 * start-up phases that handle them begin. ioredis re-subscribes after a reconnect; messages
 * published meanwhile are lost, so `onReconnect` listeners re-read what the channels announce
 * (the lanes hash, the sync stream).
 */
export class FleetSubscriber {
  readonly #options: FleetSubscriberOptions;
  readonly #handlers = new Map<string, (message: string) => void>();
  readonly #reconnectListeners: (() => void)[] = [];
  #listening = false;
  #subscribed = false;

  constructor(options: FleetSubscriberOptions) {
    this.#options = options;
  }

  /** Subscribes to `channel`; each message goes to `handler` (a throw is logged). */
  async subscribe(channel: string, handler: (message: string) => void): Promise<void> {
    this.#listen();
    this.#handlers.set(channel, handler);
    await this.#options.redis.subscribe(channel);
    this.#subscribed = true;
  }

  /** Calls `listener` after each reconnect of a subscribed connection. */
  onReconnect(listener: () => void): void {
    this.#reconnectListeners.push(listener);
  }

  #listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    const { redis, logger } = this.#options;
    redis.on('message', (channel: string, message: string) => {
      try {
        this.#handlers.get(channel)?.(message);
      } catch (error) {
        logger.error({ err: error, channel }, 'a channel handler threw');
      }
    });
    redis.on('ready', () => {
      if (!this.#subscribed) return;
      for (const listener of this.#reconnectListeners) listener();
    });
  }
}
