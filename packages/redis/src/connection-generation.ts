import type { Redis } from 'ioredis';

/** Incremented on each (re)connection of a client created by `createRedis`. */
const generations = new WeakMap<Redis, number>();

/** Counts `client`'s connections (createRedis calls it on every non-cluster client). */
export function trackConnections(client: Redis): Redis {
  generations.set(client, 0);
  client.on('ready', () => generations.set(client, (generations.get(client) ?? 0) + 1));
  return client;
}

/** How many times `client` has become ready (undefined for a client createRedis did not make). */
export function connectionGeneration(client: Redis): number | undefined {
  return generations.get(client);
}
