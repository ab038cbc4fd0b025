// Helpers of the peer fan-out tests: the coordinator's plan, the staged tensors compared with the
// uploaded ones, a wait on a peer having verified a range, and a hostile peer registered in the
// fleet as a worker would register (an adversary with Redis access, not a mock of our code).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { coordinatorKeys } from '@flowfleet/coordinator';
import type { SafetensorsTensor } from '@flowfleet/formats';
import {
  WeightVersionRecordSchema,
  WorkerManifestSchema,
  type FanoutPlan,
} from '@flowfleet/protocol';
import type { FlowfleetWorker } from '@flowfleet/worker';
import { TOKENS, waitUntil, type TestFleet } from './fleet-fixture.js';

/** The plan the coordinator wrote for `component` at `version` (in the version's record). */
export async function planOf(
  fleet: TestFleet,
  component: string,
  version: number,
): Promise<FanoutPlan> {
  const keys = coordinatorKeys(fleet.prefix);
  const text = await fleet.redis.hget(keys.weights(component), `v:${version}`);
  if (text === null) throw new Error(`no record of ${component} v${version}`);
  const { plan } = WeightVersionRecordSchema.parse(JSON.parse(text));
  if (plan === undefined) throw new Error(`no fan-out plan for ${component} v${version}`);
  return plan;
}

/** Whether the worker's current dit tensors are exactly the uploaded F32 ones. */
export function holdsExactly(
  worker: FlowfleetWorker,
  uploaded: ReadonlyMap<string, SafetensorsTensor>,
): boolean {
  const current = worker.modelInstance().currentWeights('dit').tensors;
  if (current.size !== uploaded.size) return false;
  for (const [name, tensor] of uploaded) {
    const held = current.get(name)?.data;
    if (held === undefined) return false;
    const a = Buffer.from(held.buffer, held.byteOffset, held.byteLength);
    const b = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
    if (!a.equals(b)) return false;
  }
  return true;
}

/** Waits until the peer at `peerUrl` serves bytes `[begin, end)` of `sha256` (it verified them). */
export async function peerServes(
  peerUrl: string,
  sha256: string,
  begin: number,
  end: number,
  timeoutMs = 15_000,
): Promise<void> {
  await waitUntil(
    async () => {
      const response = await fetch(`${peerUrl}/v1/blobs/${sha256}`, {
        headers: { authorization: `Bearer ${TOKENS.worker}`, range: `bytes=${begin}-${end - 1}` },
      }).catch(() => undefined);
      if (response === undefined) return undefined;
      await response.arrayBuffer();
      return response.status === 206 ? true : undefined;
    },
    `${peerUrl} to serve ${sha256.slice(0, 8)} ${begin}-${end}`,
    timeoutMs,
  );
}

/** A peer that answers every range with bytes of the right length and the wrong content. */
export interface HostilePeer {
  readonly workerId: string;
  readonly url: string;
  /** Range requests it answered. */
  served(): number;
  close(): Promise<void>;
}

/**
 * Starts a hostile peer server and registers it in the fleet as a live worker serving the dit at
 * version 0 (its manifest copied from `model`'s, its own id and peerUrl, a heartbeat), so the
 * coordinator puts it in the next plan: with an id that sorts first, it is the chain's head.
 */
export async function startHostilePeer(
  fleet: TestFleet,
  model: FlowfleetWorker,
  workerId: string,
): Promise<HostilePeer> {
  let served = 0;
  const server: Server = createServer((request, response) => {
    const match = /^bytes=(\d+)-(\d+)$/.exec(String(request.headers.range));
    if (match === null) {
      response.writeHead(400).end();
      return;
    }
    served += 1;
    const length = Number(match[2]) - Number(match[1]) + 1;
    response.writeHead(206, {
      'content-length': length,
      'content-type': 'application/octet-stream',
    });
    response.end(Buffer.alloc(length, 0x5a));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys = coordinatorKeys(fleet.prefix);
  const manifest = WorkerManifestSchema.parse({
    ...model.manifest(),
    workerId,
    peerUrl: url,
    weights: { ...model.manifest().weights, dit: 0 },
  });
  const heartbeat = { workerId, at: new Date().toISOString(), activeJobs: 0, lanes: [] };
  await fleet.redis
    .multi()
    .set(keys.worker(workerId), JSON.stringify(manifest))
    .sadd(keys.workers, workerId)
    .set(keys.heartbeat(workerId), JSON.stringify(heartbeat), 'PX', 60_000)
    .exec();
  return {
    workerId,
    url,
    served: () => served,
    async close() {
      await fleet.redis.del(keys.heartbeat(workerId), keys.worker(workerId));
      await fleet.redis.srem(keys.workers, workerId);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
