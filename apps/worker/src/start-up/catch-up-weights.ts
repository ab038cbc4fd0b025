import { LoraMerger } from '@flowfleet/models';
import { EgressBucket } from '@flowfleet/protocol';
import { PeerClients } from '../weights/peer-clients.js';
import { peerBindHost } from '../worker-options.js';
import { PeerServer } from '../weights/peer-server.js';
import { VerifiedRanges } from '../weights/verified-ranges.js';
import { WeightReconciler } from '../weights/weight-reconciler.js';
import type { RedisParts } from './connect-redis.js';
import type { ComputeParts } from './start-compute.js';
import type { FleetLink } from './link-fleet.js';
import type { ModelParts } from './load-models.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The worker's weights, kept at the desired state of the trainer's syncs. */
export interface WeightParts extends PhaseParts {
  readonly reconciler: WeightReconciler;
}

/**
 * Phase 5: follows the sync channel, then reconciles every component once (subscribed first, so
 * no sync falls between the two), before the worker registers: its first manifest shows the
 * weights it caught up to. A pass that fails backs off and retries on its own (and the rescan
 * timer queues every component again). LoRA merges run on the compute pool's threads (models'
 * LoraMerger), off the event loop.
 */
export async function catchUpWeights(
  { options, keys, logger }: StartUpContext,
  parts: {
    readonly redis: RedisParts;
    readonly compute: ComputeParts;
    readonly models: ModelParts;
    readonly link: FleetLink;
  },
): Promise<WeightParts> {
  const { link } = parts;
  // LoRA merges run on the compute pool, as forwards do; its handler is loaded on first use.
  let merger: Promise<LoraMerger> | undefined;
  const attachMerger = (): Promise<LoraMerger> =>
    (merger ??= LoraMerger.attach(parts.compute.pool).catch((error: unknown) => {
      merger = undefined;
      throw error;
    }));
  // Peer fan-out (ADR 009): the server of verified ranges starts before the worker registers, so
  // its first manifest advertises it; peers are dialled with the SDK client, without retries.
  const peerClients = new PeerClients({ token: options.workerToken });
  let ranges: VerifiedRanges | undefined;
  let peerServer: PeerServer | undefined;
  if (options.peer !== false) {
    ranges = new VerifiedRanges();
    peerServer = await PeerServer.start({
      host: options.peer.host ?? peerBindHost(options.coordinatorUrl),
      port: options.peer.port ?? 0,
      advertiseUrl: options.peer.advertiseUrl,
      token: options.workerToken,
      ranges,
      egress:
        options.egressBytesPerSecond === undefined
          ? undefined
          : new EgressBucket(options.egressBytesPerSecond),
      logger: logger.child({ part: 'peer' }),
    });
    link.manifest.advertisePeer(peerServer.url);
    logger.info({ peerUrl: peerServer.url }, 'peer server listening');
  }
  const server = peerServer;
  const reconciler = new WeightReconciler({
    redis: parts.redis.redis,
    keys,
    workerId: options.workerId,
    target: parts.models.host,
    blobs: link.coordinator,
    merger: attachMerger,
    logger: logger.child({ part: 'sync' }),
    onWeightsChanged: () => link.manifest.refresh(),
    fanout: {
      ...(ranges === undefined ? {} : { ranges }),
      peer: (peer) => peerClients.source(peer),
    },
  });
  const shutdown = [
    step('weight syncs', () => reconciler.close()),
    step('peer connections', () => peerClients.close()),
    ...(server === undefined ? [] : [step('peer server', () => server.close())]),
  ];
  await parts.redis.channels.subscribe(keys.syncChannel, (message) =>
    reconciler.handleMessage(message),
  );
  await reconciler.reconcileAll();
  return { reconciler, shutdown };
}
