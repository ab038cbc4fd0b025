import type { FleetKeys, SyncAck, SyncStatus } from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { SourceFacts } from './fanout-session.js';
import type { LoadedVersion } from './version-loader.js';

/** What an ack reports besides its status. */
export interface AckFacts {
  readonly reason?: string;
  readonly code?: string;
  readonly loaded?: LoadedVersion;
  readonly sources?: SourceFacts;
}

/** Where an ack is written. */
export interface AckTarget {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly workerId: string;
  readonly logger: Logger;
}

/** The SyncAck of one version on this worker. */
export function ackOf(
  workerId: string,
  component: string,
  version: number,
  status: SyncStatus,
  { reason, code, loaded, sources }: AckFacts,
): SyncAck {
  return {
    workerId,
    component,
    version,
    status,
    ...(reason === undefined ? {} : { reason: reason.slice(0, 2_000) }),
    ...(code === undefined ? {} : { code }),
    ...(loaded === undefined
      ? {}
      : {
          fetchedBytes: loaded.fetchedBytes,
          reusedTensors: loaded.reusedTensors,
          ...(loaded.boundLayers === undefined ? {} : { boundLayers: loaded.boundLayers }),
        }),
    ...(sources === undefined || Object.keys(sources.sources).length + sources.fallbackCount === 0
      ? {}
      : {
          sources: sources.sources,
          fallbackCount: sources.fallbackCount,
          ...(sources.fallbacks.length === 0 ? {} : { fallbacks: sources.fallbacks }),
        }),
    at: new Date().toISOString(),
  };
}

/**
 * Writes this worker's ack of `version` (`acks(component, version)`, field: the worker id). A
 * failed write is logged and changes nothing here: a staged version stays staged (the manifest
 * says what the worker holds), a refusal stays remembered.
 */
export async function writeAck(
  { redis, keys, workerId, logger }: AckTarget,
  component: string,
  version: number,
  status: SyncStatus,
  facts: AckFacts,
): Promise<void> {
  const ack = ackOf(workerId, component, version, status, facts);
  try {
    await redis.hset(keys.acks(component, version), workerId, JSON.stringify(ack));
  } catch (error) {
    logger.error({ err: error, component, version }, 'ack failed');
  }
}
