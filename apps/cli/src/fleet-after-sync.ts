import type { Fleet, FlowfleetClient } from '@flowfleet/client';

/** How long to wait for the fleet view to show the workers that acked a sync. */
const FLEET_CATCH_UP_MS = 3_000;
const POLL_MS = 50;

/**
 * The fleet as `GET /v1/fleet` shows it once every worker in `okWorkers` holds `version` of
 * `component` there, or, after a few seconds, as it is then. The coordinator's fleet view is
 * shared and up to a second old, so right after the acks it may still show the old version.
 */
export async function fleetAfterSync(
  client: FlowfleetClient,
  component: string,
  version: number,
  okWorkers: readonly string[],
  signal?: AbortSignal,
): Promise<Fleet> {
  const deadline = performance.now() + FLEET_CATCH_UP_MS;
  for (;;) {
    const fleet = await client.fleet(signal === undefined ? {} : { signal });
    const shows = okWorkers.every(
      (id) =>
        fleet.workers.find((worker) => worker.workerId === id)?.weights[component] === version,
    );
    if (shows || performance.now() > deadline) return fleet;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
