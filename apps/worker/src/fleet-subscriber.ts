import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** What the subscriber needs. */
export interface FleetSubscriberOptions {
  /** A dedicated connection (it enters subscriber mode). */
  readonly redis: Redis;
  /** Channel → handler of each message. */
  readonly handlers: Readonly<Record<string, (message: string) => void>>;
  /** Called after a reconnect (messages may have been missed: rescan). */
  readonly onResubscribed: () => void;
  readonly logger: Logger;
}

/**
 * One pub/sub connection for the lane and sync channels. ioredis re-subscribes after a
 * reconnect; messages published meanwhile are lost, so `onResubscribed` lets the worker re-read
 * the lanes hash and the sync stream.
 */
export class FleetSubscriber {
  readonly #options: FleetSubscriberOptions;
  #started = false;

  constructor(options: FleetSubscriberOptions) {
    this.#options = options;
  }

  /** Subscribes to every channel; resolves once Redis confirmed. */
  async start(): Promise<void> {
    const { redis, handlers, logger } = this.#options;
    redis.on('message', (channel: string, message: string) => {
      const handler = handlers[channel];
      try {
        handler?.(message);
      } catch (error) {
        logger.error({ err: error, channel }, 'a channel handler threw');
      }
    });
    redis.on('ready', () => {
      if (this.#started) this.#options.onResubscribed();
    });
    await redis.subscribe(...Object.keys(handlers));
    this.#started = true;
  }
}
