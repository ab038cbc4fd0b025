import { LoraMerger } from '@flowfleet/models';
import { EgressBucket } from '@flowfleet/protocol';
import { PeerClients } from '../weights/peer-clients.js';
import { PeerServer } from '../weights/peer-server.js';
import { VerifiedRanges } from '../weights/verified-ranges.js';
import { WeightSyncer } from '../weights/weight-syncer.js';
import type { RedisParts } from './connect-redis.js';
import type { ComputeParts } from './start-compute.js';
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
 * weights it caught up to. A failed catch-up is logged; the next rescan retries it. LoRA merges
 * run on the compute pool's threads (models' LoraMerger), off the event loop.
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
      host: options.peer.host ?? '0.0.0.0',
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
  const syncer = new WeightSyncer({
    redis: parts.redis.redis,
    keys,
    workerId: options.workerId,
    target: parts.models.host,
    blobs: link.coordinator,
    merger: attachMerger,
    limits: link.limits,
    logger: logger.child({ part: 'sync' }),
    onWeightsChanged: () => link.manifest.refresh(),
    fanout: {
      ...(ranges === undefined ? {} : { ranges }),
      peer: (peer) => peerClients.source(peer),
    },
  });
  const shutdown = [
    step('weight syncs', () => syncer.close()),
    step('peer connections', () => peerClients.close()),
    ...(server === undefined ? [] : [step('peer server', () => server.close())]),
  ];
  await parts.redis.channels.subscribe(keys.syncChannel, (message) =>
    syncer.handleMessage(message),
  );
  try {
    await syncer.catchUp();
  } catch (error) {
    logger.error({ err: error }, 'catching up on weight syncs failed; the next rescan retries');
  }
  return { syncer, shutdown };
}
