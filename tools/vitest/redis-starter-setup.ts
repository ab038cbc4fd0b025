// vitest global set-up: decides once per test run how throwaway Redis servers start (a container
// through @testcontainers/redis when a container engine answers testcontainers' probe, else a
// redis-server child), prints the choice once, and hands it to every test worker through
// FLOWFLEET_REDIS_STARTER so no worker probes (or imports testcontainers) again.
import {
  chooseRedisStarter,
  describeRedisChoice,
  REDIS_STARTER_ENV,
} from '@flowfleet/cli/local-redis';

/** Runs once, before any test file. */
export async function setup(): Promise<void> {
  const choice = await chooseRedisStarter();
  process.env[REDIS_STARTER_ENV] = choice.starter;
  console.log(`[flowfleet] ${describeRedisChoice(choice)}`);
}
