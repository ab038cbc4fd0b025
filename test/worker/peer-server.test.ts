// One blob route (issue 22, item 5): a worker's peer server is the coordinator's `GET
// /v1/blobs/:sha256` — the same implementation, auth check and error envelope — serving ranges
// only, from what it verified; and it binds to loopback when the fleet is on one host.
import { encodeWeights } from '@flowfleet/models';
import { initWeights, WAN21_MINI } from '@flowfleet/models/wan21';
import { WorkerManifestSchema } from '@flowfleet/protocol';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, TOKENS } from './fleet-fixture.js';
import { acksOf, spanOf } from './sync-helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

interface Answer {
  status: number;
  code?: string;
  contentRange: string | null;
  bytes?: Buffer;
}

async function ask(url: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, { headers });
  const body = Buffer.from(await response.arrayBuffer());
  const contentRange = response.headers.get('content-range');
  if (response.status >= 400) {
    return {
      status: response.status,
      code: (JSON.parse(body.toString('utf8')) as { code: string }).code,
      contentRange,
    };
  }
  return { status: response.status, contentRange, bytes: body };
}

describe('the peer server', () => {
  it('answers as the coordinator’s blob route does, ranges only, on loopback here', async () => {
    const fleet = await startTestFleet(server.url, 'peer-route');
    try {
      // No `host`: the default for a coordinator on loopback (the test fleet's) is 127.0.0.1.
      const worker = await fleet.startWorker({ peer: { port: 0 } });
      const file = encodeWeights(initWeights(WAN21_MINI, 5, 'dit'));
      const sha256 = await fleet.syncWeights('dit', 1, file);
      expect((await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]?.status).toBe('ok');
      const manifest = WorkerManifestSchema.parse(
        JSON.parse(
          (await fleet.redis.get(coordinatorKeys(fleet.prefix).worker(worker.workerId))) ?? '',
        ),
      );
      const peerUrl = manifest.peerUrl!;
      expect(new URL(peerUrl).hostname).toBe('127.0.0.1');

      const [name] = [...initWeights(WAN21_MINI, 5, 'dit').keys()];
      const { begin, end } = spanOf(file, name!);
      const range = `bytes=${begin}-${end - 1}`;
      const auth = { authorization: `Bearer ${TOKENS.worker}` };
      const both = async (path: string, headers: Record<string, string>) =>
        Promise.all([fleet.url, peerUrl].map((base) => ask(`${base}${path}`, headers)));

      const [coordinator, peer] = (await both(`/v1/blobs/${sha256}`, { ...auth, range })) as [
        Answer,
        Answer,
      ];
      expect(coordinator.status).toBe(206);
      expect(peer.status).toBe(206);
      expect(peer.bytes!.equals(coordinator.bytes!)).toBe(true);
      expect(peer.bytes!.equals(Buffer.from(file.subarray(begin, end)))).toBe(true);
      expect(coordinator.contentRange).toBe(`bytes ${begin}-${end - 1}/${file.length}`);
      expect(peer.contentRange).toBe(`bytes ${begin}-${end - 1}/*`);

      // The same refusals, in the same envelope, with the same codes.
      const cases: [string, Record<string, string>, number, string][] = [
        [`/v1/blobs/${sha256}`, { range }, 401, 'API_UNAUTHORIZED'],
        [
          `/v1/blobs/${sha256}`,
          { authorization: `Bearer ${TOKENS.trainer}x`, range },
          401,
          'API_UNAUTHORIZED',
        ],
        [`/v1/blobs/${sha256}`, { ...auth, range: 'bytes=5-' }, 416, 'API_RANGE_NOT_SATISFIABLE'],
        [`/v1/blobs/${sha256}`, { ...auth, range: 'bytes=9-3' }, 416, 'API_RANGE_NOT_SATISFIABLE'],
        ['/v1/blobs/not-a-digest', { ...auth, range }, 400, 'API_INVALID_PARAMS'],
        ['/v1/nothing-here', auth, 404, 'API_ROUTE_NOT_FOUND'],
      ];
      for (const [path, headers, status, code] of cases) {
        const answers = await both(path, headers);
        expect(
          answers.map((a) => [a.status, a.code]),
          `${path} ${JSON.stringify(headers)}`,
        ).toEqual([
          [status, code],
          [status, code],
        ]);
      }
      // A peer serves ranges only (the whole blob is the coordinator's).
      expect(await ask(`${peerUrl}/v1/blobs/${sha256}`, auth)).toMatchObject({
        status: 416,
        code: 'API_RANGE_NOT_SATISFIABLE',
      });
      expect((await ask(`${fleet.url}/v1/blobs/${sha256}`, auth)).status).toBe(200);
    } finally {
      await fleet.close();
    }
  });
});
