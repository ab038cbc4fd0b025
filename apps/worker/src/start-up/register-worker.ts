import { WorkerRegistration } from '../fleet/worker-registration.js';
import type { RedisParts } from './connect-redis.js';
import type { FleetLink } from './link-fleet.js';
import type { LaneParts } from './open-lanes.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The worker as the fleet sees it: its manifest and its heartbeat. */
export interface RegistrationParts extends PhaseParts {
  readonly registration: WorkerRegistration;
}

/**
 * Phase 7: writes the manifest, joins the `workers` set and starts the heartbeat, which shows the
 * lane server's load (a beat soon after each change) and follows manifest rebuilds. Closing
 * deletes the heartbeat; the manifest stays, so the fleet shows the worker dead.
 */
export async function registerWorker(
  { options, keys, logger }: StartUpContext,
  parts: { readonly redis: RedisParts; readonly link: FleetLink; readonly lanes: LaneParts },
): Promise<RegistrationParts> {
  const { link, lanes } = parts;
  const registration = new WorkerRegistration({
    redis: parts.redis.redis,
    keys,
    workerId: options.workerId,
    heartbeatTtlMs: options.heartbeatTtlMs,
    manifest: () => link.manifest.current(),
    load: () => ({
      activeJobs: lanes.server.activeJobs,
      lanes: lanes.watcher.served(),
      embedsCacheBytes: lanes.embeds.bytes,
    }),
    logger,
  });
  link.manifest.onChange(() => void registration.refreshManifest());
  lanes.server.onChange(() => registration.beatSoon());
  const shutdown = [step('heartbeat', () => registration.close())];
  try {
    await registration.start();
  } catch (error) {
    await registration.close().catch(() => undefined);
    throw error;
  }
  return { registration, shutdown };
}
