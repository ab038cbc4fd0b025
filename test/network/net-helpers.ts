// Small helpers of the network tests: results, weight syncs and acks, manifests and logs, each
// read through the fleet's trainer relay or its Redis socket.
import { coordinatorKeys } from '@flowfleet/coordinator';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { SyncAckSchema, WorkerManifestSchema, type SyncAck } from '@flowfleet/protocol';
import { expect } from 'vitest';
import type { HostProcess } from '../harness/netns-process.js';
import { TOKENS, waitUntil } from '../worker/fleet-fixture.js';
import type { NetFleet } from './net-fleet.js';

/** GET /v1/rollouts/:id/result bytes. */
export async function resultOf(fleet: NetFleet, id: string): Promise<Uint8Array> {
  const response = await fleet.fetch(`${fleet.coordinatorUrl}/v1/rollouts/${id}/result`, {
    headers: { authorization: `Bearer ${TOKENS.viewer}` },
  });
  if (response.status !== 200) throw new Error(`result ${id}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** PUT the blob of dit weights made from `seed`, then sync it as `version`. */
export async function syncDit(fleet: NetFleet, version: number, seed: number): Promise<void> {
  const blob = encodeWeights(initWeights(wan21MiniCard.config, seed, 'dit'));
  const upload = await fleet.fetch(`${fleet.coordinatorUrl}/v1/blobs`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${TOKENS.trainer}`,
      'content-type': 'application/octet-stream',
    },
    body: blob,
  });
  expect(upload.status).toBe(201);
  const { sha256 } = (await upload.json()) as { sha256: string };
  const sync = await fleet.api('/v1/weights/dit/sync', { json: { version, sha256 } });
  expect(sync.status).toBe(202);
}

/** `workerId`'s ack of dit `version`, once there is one. */
export function ackOf(
  fleet: NetFleet,
  workerId: string,
  version: number,
  timeoutMs: number,
): Promise<SyncAck> {
  return waitUntil(
    async () => {
      const raw = await fleet.redis.hget(
        coordinatorKeys(fleet.prefix).acks('dit', version),
        workerId,
      );
      return raw === null ? undefined : SyncAckSchema.parse(JSON.parse(raw));
    },
    `${workerId}'s ack of dit v${version}`,
    timeoutMs,
  );
}

/** The weight versions `workerId`'s manifest shows. */
export async function manifestWeights(
  fleet: NetFleet,
  workerId: string,
): Promise<Record<string, number>> {
  const raw = await fleet.redis.get(coordinatorKeys(fleet.prefix).worker(workerId));
  return WorkerManifestSchema.parse(JSON.parse(raw ?? 'null')).weights;
}

/** Waits until `process` printed a line matching `pattern` after `from` (its `printed()` then). */
export async function waitForLog(
  process: HostProcess,
  from: number,
  pattern: RegExp,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  await waitUntil(
    () => (pattern.test(process.outputSince(from)) ? true : undefined),
    what,
    timeoutMs,
  );
}
