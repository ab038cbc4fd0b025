import { fleetKeys, type FleetKeys } from '@flowfleet/protocol';

/**
 * Every Redis key the worker touches (STYLE.md rule 4). The worker has no private keys: it writes
 * exactly the shared layout the coordinator reads (manifest, heartbeat, acks) and BullMQ builds its
 * own keys under `laneBullPrefix(lane)`.
 */
export type WorkerKeys = FleetKeys;

/** The worker's key layout under `prefix`. @throws FlowfleetError PROTO_INVALID_KEY */
export function workerKeys(prefix: string): WorkerKeys {
  return fleetKeys(prefix);
}
