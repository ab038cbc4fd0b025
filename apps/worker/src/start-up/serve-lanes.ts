import type { RedisParts } from './connect-redis.js';
import type { WeightParts } from './catch-up-weights.js';
import type { LaneParts } from './open-lanes.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/**
 * Phase 8: follows the lane channel (and, on a cluster, the lane-work channel that wakes an idle
 * worker), serves every recorded lane the manifest satisfies (the
 * channel first, so no lane falls between the two), starts the fetch loop, and re-reads the lanes
 * hash and reconciles every weight component every `rescanIntervalMs` and after the channels
 * reconnect (a sync message lost while they were down is a missed trigger only). Shutdown:
 * stop fetching, then drain running jobs within `drainTimeoutMs` (the rest are handed back).
 */
export async function serveLanes(
  { options, keys, logger }: StartUpContext,
  parts: { readonly redis: RedisParts; readonly weights: WeightParts; readonly lanes: LaneParts },
): Promise<PhaseParts> {
  const { server, watcher } = parts.lanes;
  const { reconciler } = parts.weights;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const rescan = async (): Promise<void> => {
    try {
      await watcher.rescan();
      await reconciler.reconcileAll();
    } catch (error) {
      logger.warn({ err: error }, 'rescan failed');
    }
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void rescan().finally(schedule), options.rescanIntervalMs);
  };
  await parts.redis.channels.subscribe(keys.laneChannel, (message) =>
    watcher.handleMessage(message),
  );
  // On a cluster no XREAD spans the lanes' slots: the coordinator names each lane a job is added
  // to on one channel, and an idle worker that serves it wakes (the poll stays the fallback:
  // retries, stalled jobs, a message lost across a reconnect).
  if (parts.redis.events === undefined) {
    const { queue } = parts.lanes;
    await parts.redis.channels.subscribe(keys.laneWorkChannel, (lane) => queue.wakeFor(lane));
  }
  parts.redis.channels.onReconnect(() => void rescan());
  await watcher.rescan();
  server.start();
  schedule();
  return {
    shutdown: [
      step('stop fetching', async () => {
        stopped = true;
        clearTimeout(timer);
        await server.stopFetching();
      }),
      step('drain', () => server.drain(options.drainTimeoutMs)),
    ],
  };
}
