import type { FlowfleetClient, StoredBlob, SyncAccepted, SyncProgress } from '@flowfleet/client';
import { pushWeights } from '../commands/sync-command.js';

/** A weight version pushed and acked by every live worker. */
export interface DemoSync {
  readonly blob: StoredBlob;
  readonly sync: SyncAccepted;
  readonly progress: SyncProgress;
  /** Worker id → ms from the sync call until the coordinator showed its `ok` ack. */
  readonly ackMs: Readonly<Record<string, number>>;
}

/** How long every live worker gets to fetch, verify, stage and ack a version. */
const SYNC_TIMEOUT_MS = 60_000;

/**
 * Uploads a dit weights blob, syncs it as `version` and waits until every live worker acked it
 * `ok`, noting when each ack appeared.
 * @throws FlowfleetError CLIENT_SYNC_FAILED (a worker refused it and none loaded it),
 *   CLIENT_TIMEOUT, and the upload/sync codes
 */
export async function pushDitVersion(
  client: FlowfleetClient,
  bytes: Uint8Array,
  version: number,
  signal: AbortSignal,
): Promise<DemoSync> {
  const started = performance.now();
  const { blob, sync } = await pushWeights(client, 'dit', bytes, version, signal);
  const ackMs: Record<string, number> = {};
  const progress = await client.waitForSync(
    'dit',
    version,
    { all: true },
    {
      timeoutMs: SYNC_TIMEOUT_MS,
      pollMs: 50,
      signal,
      onUpdate: (update) => {
        for (const id of update.okWorkers) ackMs[id] ??= performance.now() - started;
      },
    },
  );
  for (const id of progress.okWorkers) ackMs[id] ??= performance.now() - started;
  return { blob, sync, progress, ackMs };
}
