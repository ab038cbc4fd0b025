// vitest global set-up: decides once per test run how throwaway Redis servers start (a container
// through @testcontainers/redis when a container engine answers testcontainers' probe, else a
// redis-server child), prints the choice once, and hands it to every test worker through
// FLOWFLEET_REDIS_STARTER so no worker probes (or imports testcontainers) again.
import {
  chooseRedisStarter,
  describeRedisChoice,
  REDIS_STARTER_ENV,
} from '@flowfleet/cli/local-redis';

/** Marks the choice as made in this process: every project of a run runs the set-up again. */
const CHOSEN = Symbol.for('flowfleet.redisStarterChosen');

/** Runs before any test file (once per project; only the first one decides and prints). */
export async function setup(): Promise<void> {
  const state = globalThis as { [CHOSEN]?: true };
  if (state[CHOSEN]) return;
  state[CHOSEN] = true;
  const choice = await chooseRedisStarter();
  process.env[REDIS_STARTER_ENV] = choice.starter;
  console.log(`[flowfleet] ${describeRedisChoice(choice)}`);
}
