import type { RolloutSummary } from '@flowfleet/formats';
import { RolloutJobRunner } from '../jobs/rollout-job-runner.js';
import { TextEmbedsCache } from '../jobs/text-embeds-cache.js';
import type { ConcurrencyGate } from '../lanes/concurrency-gate.js';
import { LaneServer } from '../lanes/lane-server.js';
import { LaneWatcher } from '../lanes/lane-watcher.js';
import { createBullmqJobQueue } from '../queue/bullmq/bullmq-job-queue.js';
import type { JobQueue } from '../queue/job-queue.js';
import type { RedisParts } from './connect-redis.js';
import type { WeightParts } from './catch-up-weights.js';
import type { FleetLink } from './link-fleet.js';
import type { ModelParts } from './load-models.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The lane machinery, built but not serving yet. */
export interface LaneParts extends PhaseParts {
  readonly queue: JobQueue<RolloutSummary>;
  readonly server: LaneServer;
  readonly watcher: LaneWatcher;
  /** The text embeddings the jobs named, by sha256 (its bytes go out in the heartbeat). */
  readonly embeds: TextEmbedsCache;
}

/**
 * Phase 6: the job queue, the job runner, the lane server and the lane watcher. No I/O: lanes
 * are opened when phase 8 serves them. Closing the queue hands back any job still held.
 */
export function openLanes(
  { options, keys, logger }: StartUpContext,
  parts: {
    readonly gate: ConcurrencyGate;
    readonly redis: RedisParts;
    readonly models: ModelParts;
    readonly link: FleetLink;
    readonly weights: WeightParts;
  },
): LaneParts {
  const { host } = parts.models;
  const { link } = parts;
  const { reconciler } = parts.weights;
  const queue = createBullmqJobQueue<RolloutSummary>({
    connection: parts.redis.redis,
    ...(parts.redis.events === undefined ? {} : { events: parts.redis.events }),
    bullPrefix: keys.laneBullPrefix,
    consumerName: options.workerId,
    locks: options.locks,
    replication: options.redisReplication,
    logger,
  });
  const embeds = new TextEmbedsCache({ source: link.coordinator, logger });
  const runner = new RolloutJobRunner({
    workerId: options.workerId,
    limits: link.limits,
    manifest: () => link.manifest.current(),
    instance: (model) => host.instance(model),
    textEmbeddings: (request, signal) => embeds.load(request, signal),
    ensureWeights: (component, requirement, signal) =>
      reconciler.ensure(component, requirement, options.weightsWaitMs, signal),
    putResults: (jobId, lockToken, files, signal) =>
      link.coordinator.putResults(jobId, lockToken, files, signal),
    storedSummary: (jobId, signal) => link.coordinator.storedSummary(jobId, signal),
    logger,
  });
  const server = new LaneServer({
    queue,
    gate: parts.gate,
    pollIntervalMs: options.pollIntervalMs,
    run: (lane, job, signal, computed) => runner.run(lane, job, signal, computed),
    logger,
  });
  const watcher = new LaneWatcher({
    redis: parts.redis.redis,
    keys,
    manifest: () => link.manifest.current(),
    serve: (spec) => server.serve(spec),
    logger,
  });
  return { queue, server, watcher, embeds, shutdown: [step('job queue', () => queue.close())] };
}
