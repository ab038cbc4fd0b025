import { fleetKeyPart, fleetKeys, type FleetKeys } from '@flowfleet/protocol';

/** Every Redis key the coordinator touches: the shared fleet layout plus its private keys. */
export interface CoordinatorKeys extends FleetKeys {
  /** Hash: worker id → epoch ms when a coordinator first saw it dead (for pruning). */
  readonly deadWorkers: string;
  /** Set: every component that was ever synced (so metrics need no SCAN). */
  readonly weightComponents: string;
  /**
   * Hash: device class (`cuda/sm90`) → the manifest (weights left out) of the last live worker seen
   * in that class, so a class scaled to zero still says which lanes it can serve.
   */
  readonly scalingClasses: string;
  /** String with a TTL: held by the coordinator running a retention sweep. */
  readonly retentionLock: string;
  /** String with a TTL: the sha256 of the request an enqueue's Idempotency-Key was first sent with. */
  idempotencyKey(key: string): string;
}

/**
 * The one place the coordinator builds Redis key names (STYLE.md rule 4). Shared keys come from
 * protocol's `fleetKeys` so the worker writes exactly what the coordinator reads.
 */
export function coordinatorKeys(prefix: string): CoordinatorKeys {
  const shared = fleetKeys(prefix);
  return {
    ...shared,
    deadWorkers: `${shared.tag}:dead-workers`,
    weightComponents: `${shared.tag}:weight-components`,
    scalingClasses: `${shared.tag}:scaling-classes`,
    retentionLock: `${shared.tag}:retention-lock`,
    idempotencyKey: (key: string) => `${shared.tag}:idem:${fleetKeyPart('idempotency key', key)}`,
  };
}
