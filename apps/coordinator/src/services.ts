import type { CardRegistry } from '@flowfleet/models';
import type { FleetLimits, Limits } from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { BlobStore } from './blob-store.js';
import type { FleetReader } from './fleet-reader.js';
import type { JobEvents } from './job-events.js';
import type { JobStatusReader } from './job-status-reader.js';
import type { CoordinatorKeys } from './keys.js';
import type { LaneQueues } from './lane-queues.js';
import type { LaneRegistry } from './lane-registry.js';
import type { CoordinatorMetrics } from './metrics.js';
import type { RolloutService } from './rollout-service.js';
import type { RouteInfo } from './route-table.js';
import type { WeightRegistry } from './weight-registry.js';

/** Everything a route handler may use; built once per coordinator, no I/O at construction. */
export interface CoordinatorServices {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  /** The limits this coordinator enforces at the edge. */
  readonly limits: Limits;
  /** The fleet's published limits (the widest any coordinator enforced): stored jobs are read with them. */
  readonly fleetLimits: FleetLimits;
  /** The model cards this coordinator admits requests for. */
  readonly cards: CardRegistry;
  readonly logger: Logger;
  readonly blobs: BlobStore;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly fleet: FleetReader;
  readonly weights: WeightRegistry;
  readonly rollouts: RolloutService;
  readonly jobs: JobStatusReader;
  /** Wakes long-polling status requests from the lanes' job events. */
  readonly events: JobEvents;
  readonly metrics: CoordinatorMetrics;
  /** The route table as the server registered it. */
  readonly routes: readonly RouteInfo[];
}
