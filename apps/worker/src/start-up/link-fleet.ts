import { hostname } from 'node:os';
import { FleetLimits } from '@flowfleet/protocol';
import { CoordinatorClient } from '../fleet/coordinator-client.js';
import { ManifestKeeper } from '../fleet/manifest-keeper.js';
import type { RedisParts } from './connect-redis.js';
import type { ModelParts } from './load-models.js';
import type { ComputeParts } from './start-compute.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** What ties the worker to its fleet, before it announces itself. */
export interface FleetLink extends PhaseParts {
  /** The manifest it advertises (rebuilt as weights change). */
  readonly manifest: ManifestKeeper;
  /** The coordinator's API: weight blobs in, results out. */
  readonly coordinator: CoordinatorClient;
  /**
   * The limits the fleet's coordinators published: job payloads and weight syncs are read with
   * them (read when first needed, again when something fails them), never with the defaults.
   */
  readonly limits: FleetLimits;
}

/**
 * Phase 4: the manifest (from the platform probed in phase 2 and the models of phase 3), the
 * coordinator client and the published limits. No I/O.
 * @throws FlowfleetError PROTO_INVALID_MANIFEST
 */
export function linkFleet(
  { options, keys, logger }: StartUpContext,
  parts: {
    readonly redis: RedisParts;
    readonly compute: ComputeParts;
    readonly models: ModelParts;
  },
): FleetLink {
  const { backends } = parts.compute;
  const { host } = parts.models;
  const { redis } = parts.redis;
  const manifest = new ManifestKeeper({
    input: {
      workerId: options.workerId,
      host: hostname(),
      pid: process.pid,
      facts: backends.facts,
      // Read once, after the provider probe: availability no longer changes in this process.
      kernels: backends.kernels.manifest(),
      components: backends.components.manifest(),
      models: host.models,
      concurrency: options.concurrency,
      startedAt: new Date().toISOString(),
    },
    weights: () => host.held(),
  });
  const coordinator = new CoordinatorClient({
    baseUrl: options.coordinatorUrl,
    token: options.workerToken,
    uploadRetryMs: options.uploadRetryMs,
    logger: logger.child({ part: 'coordinator' }),
  });
  const limits = new FleetLimits({
    read: () => redis.hgetall(keys.limits),
    onUnreadable: (fields) => logger.warn({ fields }, 'unreadable published limits: defaults used'),
  });
  return {
    manifest,
    coordinator,
    limits,
    shutdown: [step('coordinator connections', () => coordinator.close())],
  };
}
