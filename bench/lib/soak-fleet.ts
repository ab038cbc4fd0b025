// Small helpers of the soak's fleet: a free port for the coordinator child and the wait until it
// answers and every worker is live.
import { createServer } from 'node:net';
import type { FlowfleetClient } from '@flowfleet/client';
import type { BenchChild } from './child-process.js';

/** A port of 127.0.0.1 that was free a moment ago. */
export function freePortOf(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once the coordinator lists every id in `ids` alive.
 * @throws Error when the coordinator exits or `timeoutMs` (default 120 s) passes
 */
export async function waitForLive(
  client: FlowfleetClient,
  ids: readonly string[],
  coordinator: BenchChild,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (coordinator.process.exitCode !== null) {
      throw new Error(`the coordinator exited:\n${coordinator.output()}`);
    }
    try {
      const fleet = await client.fleet({ retry: false, timeoutMs: 2_000 });
      const live = new Set(fleet.workers.filter((w) => w.alive).map((w) => w.workerId));
      if (ids.every((id) => live.has(id))) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`workers ${ids.join(', ')} not live in time`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
