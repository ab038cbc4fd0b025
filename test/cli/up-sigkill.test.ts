// `flowfleet up` SIGKILLed: nothing can run in the CLI any more, yet every child it started goes
// away on its own — the coordinator and workers see their stdin pipe close
// (FLOWFLEET_EXIT_WITH_PARENT=1) and shut down, the orphan reaper then stops redis-server and
// removes the temp dirs.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRunning, spawnCli, waitFor } from './cli-harness.js';

interface Ready {
  blobDir: string;
  redis: { kind: string; pid: number };
  coordinator: { pid: number };
  workers: { id: string; pid: number }[];
  reaper: { pid: number };
}

const START_MS = 90_000;
/**
 * Below the reaper's REAPER_AWAIT_MS (30 s, after which it SIGKILLs the apps): the coordinator and
 * workers must go by themselves. With FLOWFLEET_EXIT_WITH_PARENT=0 this test times out (checked).
 */
const GONE_MS = 20_000;

describe('flowfleet up, SIGKILLed', () => {
  it(
    'leaves no child running and no temp dir behind',
    async () => {
      const env = { ...process.env };
      delete env['REDIS_URL'];
      const up = spawnCli(['up', '--json', '--workers', '2'], { env });
      const ready = JSON.parse(
        await up.waitForLine((line) => line.includes('"event":"ready"'), START_MS),
      ) as Ready;
      expect(ready.redis.kind).toBe('redis-server');
      const children = {
        redis: ready.redis.pid,
        coordinator: ready.coordinator.pid,
        ...Object.fromEntries(ready.workers.map((w) => [w.id, w.pid])),
        reaper: ready.reaper.pid,
      };
      expect(Object.values(children).every(isRunning)).toBe(true);

      up.child.kill('SIGKILL');
      await up.exited;
      const started = Date.now();
      await waitFor(
        () => Object.values(children).every((pid) => !isRunning(pid)),
        `every child of the killed CLI to exit (${JSON.stringify(children)})`,
        GONE_MS,
      );
      console.log(`all children of a SIGKILLed up gone in ${Date.now() - started} ms`);
      await waitFor(() => !existsSync(ready.blobDir), 'the blob dir to be removed', 5_000);
    },
    START_MS + GONE_MS + 20_000,
  );
});
