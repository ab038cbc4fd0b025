import type { CardRegistry } from '@flowfleet/models';
import type { EgressBucket, FleetLimits, Limits } from '@flowfleet/protocol';
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
import type { ResultProvenance } from './result-provenance.js';
import type { RetentionSweeper } from './retention/retention-sweeper.js';
import type { RolloutService } from './rollout-service.js';
import type { RouteInfo } from './route-table.js';
import type { ScalingPlanner } from './scaling-planner.js';
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
  /** The egress cap blob downloads pay into (`FLOWFLEET_EGRESS_BYTES_PER_S`), if any. */
  readonly egress: EgressBucket | undefined;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly fleet: FleetReader;
  readonly weights: WeightRegistry;
  readonly rollouts: RolloutService;
  readonly jobs: JobStatusReader;
  /** Who may store a job's result, and whether it answers the job (`PUT /v1/results/:id`). */
  readonly provenance: ResultProvenance;
  /** Wakes long-polling status requests from the lanes' job events. */
  readonly events: JobEvents;
  readonly metrics: CoordinatorMetrics;
  /** Scaling hints per device class (`GET /v1/scaling`, the scaling gauges). */
  readonly scaling: ScalingPlanner;
  /** Bounds jobs, results and weight versions (one sweep per interval across the fleet). */
  readonly retention: RetentionSweeper;
  /** The route table as the server registered it. */
  readonly routes: readonly RouteInfo[];
}
