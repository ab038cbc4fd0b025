// The "done when": `npm start` (= `flowfleet demo`) brings up a local fleet, runs one
// FlowGRPO-style round on weights v1 and v2, prints every section, shuts everything down and
// exits 0 — here as a real child process, with its fleet's pids checked afterwards.
import { describe, expect, it } from 'vitest';
import { isAlive, spawnCli } from './cli-harness.js';

const DEMO_BUDGET_MS = 90_000;

/** Pids the demo's banner names: redis-server, coordinator, workers. */
function bannerPids(stdout: readonly string[]): number[] {
  const text = stdout.join('\n');
  const pids = [...text.matchAll(/\bpid (\d+)/g)].map((m) => Number(m[1]));
  return [...new Set(pids)];
}

describe('npm start (flowfleet demo)', () => {
  it(
    'runs a FlowGRPO round on v1 and v2, prints every section, stops the fleet and exits 0',
    async () => {
      const started = Date.now();
      // Without REDIS_URL, as on a fresh machine: the demo starts its own redis-server.
      const env = { ...process.env };
      delete env['REDIS_URL'];
      const npm = spawnCli([], { command: 'npm', commandArgs: ['start', '--silent'], env });
      const code = await npm.exited;
      const elapsedMs = Date.now() - started;
      const out = npm.stdout.join('\n');
      expect(code, `${out}\n${npm.stderr.join('\n')}`).toBe(0);
      expect(elapsedMs).toBeLessThan(DEMO_BUDGET_MS);

      for (const section of [
        '[1/7] local fleet',
        '[2/7] push weights v1',
        '[3/7] rollouts on dit v1',
        '[4/7] trainer update → push weights v2',
        '[5/7] rollouts on dit v2',
        '[6/7] capability matrix',
        '[7/7] shut down',
      ]) {
        expect(out).toContain(section);
      }
      expect(out).toMatch(/dashboard\s+http:\/\/127\.0\.0\.1:\d+\/\?token=viewer-/);
      // Both syncs reached both workers.
      expect(out).toMatch(/synced dit v1 \(previous none\): 2\/2 live workers hold it/);
      expect(out).toMatch(/synced dit v2 \(previous 1\): 2\/2 live workers hold it/);
      expect(out.match(/^\s+w[12]\s+live\s+ok\s+2\b/gm)).toHaveLength(2);
      // 2 prompts × 4 seeds per round, each with Σ log-prob, reward and advantage.
      const sampleRows = out.match(
        /^\s+a (red fox|paper boat).*\s(10[1-4]|20[1-4])\s+w[12]\s+-?\d+\.\d{4}\s+[-+]\d/gm,
      );
      expect(sampleRows).toHaveLength(16);
      expect(out).toMatch(/graphs: \d+ captured, \d+ replayed/);
      expect(out).toMatch(/component dit\s+2\b/); // the matrix: 2 live workers on cpu
      expect(out).toContain('workers, coordinator and redis stopped');
      expect(out).toMatch(/demo finished in .*exit 0/);

      const pids = bannerPids(npm.stdout);
      expect(pids.length).toBe(4); // redis-server, coordinator, w1, w2
      expect(pids.filter(isAlive)).toEqual([]);
    },
    DEMO_BUDGET_MS + 30_000,
  );
});
