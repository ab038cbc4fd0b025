import { WeightSyncer } from '../weights/weight-syncer.js';
import type { RedisParts } from './connect-redis.js';
import type { FleetLink } from './link-fleet.js';
import type { ModelParts } from './load-models.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The worker's weights, kept in step with the trainer's syncs. */
export interface WeightParts extends PhaseParts {
  readonly syncer: WeightSyncer;
}

/**
 * Phase 5: follows the sync channel, then catches up from the sync stream (subscribed first, so
 * no sync falls between the two), before the worker registers: its first manifest shows the
 * weights it caught up to. A failed catch-up is logged; the next rescan retries it.
 */
export async function catchUpWeights(
  { options, keys, logger }: StartUpContext,
  parts: { readonly redis: RedisParts; readonly models: ModelParts; readonly link: FleetLink },
): Promise<WeightParts> {
  const { link } = parts;
  const syncer = new WeightSyncer({
    redis: parts.redis.redis,
    keys,
    workerId: options.workerId,
    target: parts.models.host,
    blobs: link.coordinator,
    limits: link.limits,
    logger: logger.child({ part: 'sync' }),
    onWeightsChanged: () => link.manifest.refresh(),
  });
  await parts.redis.channels.subscribe(keys.syncChannel, (message) =>
    syncer.handleMessage(message),
  );
  try {
    await syncer.catchUp();
  } catch (error) {
    logger.error({ err: error }, 'catching up on weight syncs failed; the next rescan retries');
  }
  return { syncer, shutdown: [step('weight syncs', () => syncer.close())] };
}
