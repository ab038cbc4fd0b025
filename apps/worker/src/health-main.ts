// The worker image's HEALTHCHECK: exit 0 while this container's worker holds a live heartbeat in
// Redis, 1 otherwise (infra/docker/worker-*.Dockerfile). It reads the worker's own environment;
// the image's entrypoint sets FLOWFLEET_WORKER_ID to the hostname when it is unset, so both
// processes name the same worker.
import { hostname } from 'node:os';
import { parseWorkerEnv } from './env.js';
import { isHeartbeatAlive } from './heartbeat-check.js';

async function main(): Promise<void> {
  let env;
  try {
    env = parseWorkerEnv(process.env);
  } catch (error) {
    process.stderr.write(`flowfleet worker health: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const workerId = env.FLOWFLEET_WORKER_ID ?? hostname();
  const alive = await isHeartbeatAlive({
    redisUrl: env.REDIS_URL,
    redisMode: env.FLOWFLEET_REDIS_MODE,
    prefix: env.FLOWFLEET_PREFIX,
    workerId,
  });
  if (!alive) process.stderr.write(`flowfleet worker health: no live heartbeat for ${workerId}\n`);
  process.exitCode = alive ? 0 : 1;
}

await main();
