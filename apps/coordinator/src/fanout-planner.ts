import { fanoutChain, fanoutChunkBytes, type FanoutPlan } from '@flowfleet/protocol';
import type { WorkerView } from './fleet-reader.js';

/**
 * The fan-out plan of `component` at `version` (ADR 009): a pipelined chain over the live workers
 * that serve the component, hold an older version and advertise a peer server. Workers left out
 * (no peer server, or not yet registered) fetch from the coordinator, which stays the source of
 * truth for every byte.
 */
export function planFanout(
  workers: readonly WorkerView[],
  component: string,
  version: number,
  sizeBytes: number,
): FanoutPlan {
  const peers = workers.flatMap(({ alive, manifest }) => {
    const held = manifest.weights[component];
    if (!alive || manifest.peerUrl === undefined || held === undefined || held >= version) {
      return [];
    }
    return [{ workerId: manifest.workerId, peerUrl: manifest.peerUrl }];
  });
  const chain = fanoutChain(peers);
  return { chain, chunkBytes: fanoutChunkBytes(sizeBytes, chain.length) };
}
