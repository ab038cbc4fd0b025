// A fleet whose blob store fills up: the coordinator answers the workers' result uploads 507
// API_BLOB_STORE_FULL (with Retry-After), the workers keep retrying, and once space is back every
// job completes with one result, byte-identical to an undisturbed run: 0 lost, 0 duplicated,
// 0 mismatched.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { fillDisk, mountTmpfs, type Tmpfs } from '../harness/tmpfs.js';
import { startTestFleet, tinyRollout, waitUntil } from '../worker/fleet-fixture.js';

let server: RedisServer;
let fs: Tmpfs;

beforeAll(async () => {
  [server, fs] = await Promise.all([startRedisServer(), mountTmpfs(8 * 1024 * 1024)]);
});

afterAll(async () => {
  await server?.stop();
  await fs?.unmount();
});

/** A pino logger that keeps every line it writes. */
function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe('a full blob store under a running fleet', () => {
  it('refuses uploads with 507 until space is back; the workers retry and nothing is lost', async () => {
    const blobDir = join(fs.dir, 'store');
    const fleet = await startTestFleet(server.url, 'disk-full', { blobDir });
    const filler = join(fs.dir, 'filler');
    try {
      const { logger, lines } = capturingLogger();
      await fleet.startWorker({ logger, uploadRetryMs: 60_000 });
      await fillDisk(filler);
      const bodies = [1, 2, 3].map((seed) => tinyRollout({ seeds: [seed, seed + 10] }));
      const accepted = await Promise.all(bodies.map((body) => fleet.enqueue(body)));

      // The worker computed a result and was refused by the full store (at least twice: it retries).
      await waitUntil(
        () =>
          lines.filter((line) => line.includes('API_BLOB_STORE_FULL')).length >= 2
            ? true
            : undefined,
        'result uploads refused with API_BLOB_STORE_FULL',
        30_000,
      );
      const refused = JSON.parse(lines.find((l) => l.includes('API_BLOB_STORE_FULL'))!) as {
        path: string;
        err: { code: string };
      };
      expect(refused.path).toMatch(/^\/v1\/results\//);
      expect(refused.err.code).toBe('API_BLOB_STORE_FULL');
      expect(await readdir(join(blobDir, 'tmp'))).toEqual([]);
      for (const { id } of accepted) expect((await fleet.status(id)).status).not.toBe('completed');

      await rm(filler);
      const completed = await Promise.all(
        accepted.map(({ id }) => fleet.waitForCompletion(id, 60_000)),
      );
      // The upload was retried within the attempt: no attempt failed for the full disk.
      for (const job of completed) expect(job.attempts).toBeLessThanOrEqual(1);
      const results = await Promise.all(accepted.map(({ id }) => fleet.result(id)));
      // The same requests again, on a store with space: the reference results.
      const again = await Promise.all(bodies.map((body) => fleet.enqueue(body)));
      await Promise.all(again.map(({ id }) => fleet.waitForCompletion(id, 60_000)));
      const references = await Promise.all(again.map(({ id }) => fleet.result(id)));
      const mismatched = results.filter(
        (bytes, i) => !Buffer.from(bytes).equals(Buffer.from(references[i]!)),
      ).length;
      const stored = await readdir(join(blobDir, 'results'));
      const report = {
        accepted: accepted.length,
        completed: completed.length,
        lost: accepted.length - completed.length,
        duplicated: stored.length - accepted.length - again.length,
        mismatched,
      };
      console.log(`disk-full fault: ${JSON.stringify(report)}`);
      expect(report).toEqual({ accepted: 3, completed: 3, lost: 0, duplicated: 0, mismatched: 0 });
      for (const { id } of accepted) {
        expect((await readdir(join(blobDir, 'results', id))).sort()).toEqual([
          'result.safetensors',
          'summary.json',
        ]);
      }
      expect(await readdir(join(blobDir, 'tmp'))).toEqual([]);
    } finally {
      await rm(filler, { force: true });
      await fleet.close();
    }
  }, 150_000);
});
