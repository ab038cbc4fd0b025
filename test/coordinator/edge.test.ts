// The edge refuses what it does not take, with the coded envelope: uploads of another media type
// (415, nothing stored), requests node:http cannot parse (400 envelope, not Node's bare body),
// Redis being away (503 with its own code), an answer that fails its own schema (a coded 500 and
// a log line), and the prompt limit counted as documented (code points).
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createCoordinator } from '@flowfleet/coordinator';
import { ErrorEnvelopeSchema, fleetKeys } from '@flowfleet/protocol';
import { MAX_PATH_PARAM_LENGTH } from '@flowfleet/protocol/http-edge';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  TOKENS,
  fakeManifest,
  registerFakeWorker,
  resultUpload,
  rolloutBody,
  startTestCoordinator,
  summaryFor,
  waitFor,
  type TestCoordinator,
} from './fixture.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
  fixture = await startTestCoordinator(server.url, 'edge', { limits: { maxPromptChars: 4 } });
  await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-edge'));
});

afterAll(async () => {
  await fixture?.close();
  await server?.stop();
});

/** Every file under the blob dir (blobs, results, temp files). */
async function storedFiles(): Promise<string[]> {
  const entries = await readdir(fixture.blobDir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((e) => join(e.parentPath, e.name));
}

function envelope(body: string) {
  return ErrorEnvelopeSchema.parse(JSON.parse(body));
}

describe('uploads take application/octet-stream only', () => {
  it.each([
    ['application/json', '{"a":1}'],
    ['application/json', '[]'],
    ['application/json', 'null'],
    ['application/json', '"x"'],
    ['text/plain', 'some text'],
    ['application/x-www-form-urlencoded', 'a=1'],
  ])('PUT /v1/blobs as %s %s → 415, nothing stored', async (type, payload) => {
    const before = await storedFiles();
    const response = await fixture.coordinator.app.inject({
      method: 'PUT',
      url: '/v1/blobs',
      headers: { ...fixture.auth('trainer'), 'content-type': type },
      payload,
    });
    expect(response.statusCode, response.body).toBe(415);
    expect(envelope(response.body)).toMatchObject({ code: 'API_UNSUPPORTED_MEDIA_TYPE' });
    expect(await storedFiles()).toEqual(before);
  });

  it('PUT /v1/blobs without a Content-Type → 415, nothing stored', async () => {
    const before = await storedFiles();
    const response = await fixture.coordinator.app.inject({
      method: 'PUT',
      url: '/v1/blobs',
      headers: fixture.auth('trainer'),
    });
    expect(response.statusCode, response.body).toBe(415);
    expect(envelope(response.body).code).toBe('API_UNSUPPORTED_MEDIA_TYPE');
    expect(await storedFiles()).toEqual(before);
  });

  it('PUT /v1/results/:id as application/json → 415, nothing stored', async () => {
    const enqueued = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: fixture.auth('trainer'),
      // Within this fixture's 4-code-point prompt limit (the prompt test below).
      payload: rolloutBody({ prompt: 'fox' }),
    });
    expect(enqueued.statusCode, enqueued.body).toBe(202);
    const { id } = enqueued.json<{ id: string }>();
    const { headers, payload } = resultUpload(summaryFor(id, [1, 2], 10), new Uint8Array(8));
    const before = await storedFiles();
    for (const body of [payload.toString('latin1'), '{"a":1}', 'null']) {
      const response = await fixture.coordinator.app.inject({
        method: 'PUT',
        url: `/v1/results/${id}`,
        headers: { ...fixture.auth('worker'), ...headers, 'content-type': 'application/json' },
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(415);
      expect(envelope(response.body).code).toBe('API_UNSUPPORTED_MEDIA_TYPE');
    }
    expect(await storedFiles()).toEqual(before);
  });
});

/** Sends raw bytes to the listening coordinator and reads the whole answer. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

describe('requests node:http cannot parse', () => {
  it.each(['abc', '-1', '1, 2'])(
    'a Content-Length of %j gets the coded envelope',
    async (length) => {
      const answer = await rawExchange(
        fixture.url,
        `POST /v1/rollouts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKENS.trainer}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{}`,
      );
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head.toLowerCase()).toContain('content-type: application/json');
      expect(envelope(body)).toMatchObject({
        code: 'API_BAD_REQUEST',
        details: { reason: 'HPE_INVALID_CONTENT_LENGTH' },
      });
    },
  );
});

describe('the router and node:http answer in the envelope too', () => {
  const viewer = `Authorization: Bearer ${TOKENS.viewer}\r\n`;

  it('a path parameter over the router bound is 414 API_URL_TOO_LONG', async () => {
    const answer = await rawExchange(
      fixture.url,
      `GET /v1/rollouts/${'a'.repeat(MAX_PATH_PARAM_LENGTH + 1)} HTTP/1.1\r\nHost: localhost\r\n${viewer}Connection: close\r\n\r\n`,
    );
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 414 /);
    expect(envelope(body)).toMatchObject({ code: 'API_URL_TOO_LONG' });
  });

  it('any id the schemas allow (128 characters) is routed: 404 API_JOB_NOT_FOUND, not 414', async () => {
    const response = await fixture.coordinator.app.inject({
      method: 'GET',
      url: `/v1/rollouts/${'a'.repeat(128)}`,
      headers: fixture.auth('viewer'),
    });
    expect(response.statusCode).toBe(404);
    expect(envelope(response.body).code).toBe('API_JOB_NOT_FOUND');
  });

  it('a job id the coordinator issues (an Idempotency-Key one too) reads back', async () => {
    const response = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: {
        ...fixture.auth('trainer'),
        'idempotency-key': '"0F8FAD5B-D9CB-469F-A165-70867728950E"',
      },
      payload: rolloutBody({ prompt: 'fox', waitForCapacity: true }),
    });
    expect(response.statusCode).toBe(202);
    const { id } = response.json<{ id: string }>();
    expect(id.length).toBeLessThanOrEqual(MAX_PATH_PARAM_LENGTH);
    const read = await rawExchange(
      fixture.url,
      `GET /v1/rollouts/${id} HTTP/1.1\r\nHost: localhost\r\n${viewer}Connection: close\r\n\r\n`,
    );
    expect(read).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a malformed percent-encoding is 400 API_BAD_REQUEST (reason BAD_URL)', async () => {
    const answer = await rawExchange(
      fixture.url,
      `GET /v1/rollouts/%E0%A4%A HTTP/1.1\r\nHost: localhost\r\n${viewer}Connection: close\r\n\r\n`,
    );
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelope(body)).toMatchObject({
      code: 'API_BAD_REQUEST',
      details: { reason: 'BAD_URL' },
    });
  });

  it('an HTTP/1.1 request without Host is 400 API_BAD_REQUEST (reason MISSING_HOST), not an empty 400', async () => {
    const answer = await rawExchange(
      fixture.url,
      `GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n`,
    );
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelope(body)).toMatchObject({
      code: 'API_BAD_REQUEST',
      details: { reason: 'MISSING_HOST' },
    });
  });

  it('HEAD answers where GET does: its status and headers, no body, the same auth', async () => {
    const head = await fixture.coordinator.app.inject({ method: 'HEAD', url: '/healthz' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const fleet = await fixture.coordinator.app.inject({
      method: 'HEAD',
      url: '/v1/fleet',
      headers: fixture.auth('viewer'),
    });
    expect(fleet.statusCode).toBe(200);
    expect(fleet.headers['content-type']).toContain('application/json');
    const anonymous = await fixture.coordinator.app.inject({ method: 'HEAD', url: '/v1/fleet' });
    expect(anonymous.statusCode).toBe(401);
    // A blob: its length, no body.
    const bytes = Buffer.from('head of a blob');
    const put = await fixture.coordinator.app.inject({
      method: 'PUT',
      url: '/v1/blobs',
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(put.statusCode).toBe(201);
    const blob = await fixture.coordinator.app.inject({
      method: 'HEAD',
      url: `/v1/blobs/${put.json<{ sha256: string }>().sha256}`,
      headers: fixture.auth('worker'),
    });
    expect(blob.statusCode).toBe(200);
    expect(blob.headers['content-length']).toBe(String(bytes.byteLength));
    expect(blob.body).toBe('');
    const missing = await fixture.coordinator.app.inject({
      method: 'HEAD',
      url: `/v1/rollouts/${'b'.repeat(20)}`,
      headers: fixture.auth('viewer'),
    });
    expect(missing.statusCode).toBe(404);
  });
});

describe('JSON bodies are strict UTF-8', () => {
  it('a prompt with bytes that are not UTF-8 is 400 API_INVALID_UTF8, nothing enqueued', async () => {
    const counts = async () =>
      (
        await fixture.coordinator.app.inject({
          method: 'GET',
          url: '/v1/lanes',
          headers: fixture.auth('viewer'),
        })
      ).body;
    const before = await counts();
    const json = Buffer.from(JSON.stringify(rolloutBody({ prompt: 'fox?' })));
    // The '?' becomes 0xFF: no UTF-8 sequence starts with it.
    json[json.indexOf('fox?') + 3] = 0xff;
    const response = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/json' },
      payload: json,
    });
    expect(response.statusCode).toBe(400);
    expect(envelope(response.body).code).toBe('API_INVALID_UTF8');
    expect(await counts()).toBe(before);
    // Valid UTF-8 (and JSON's own escapes) still pass.
    const fine = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/json' },
      payload: Buffer.from(JSON.stringify(rolloutBody({ prompt: 'fé\u00ff' }))),
    });
    expect(fine.statusCode).toBe(202);
  });
});

describe('the prompt limit counts code points', () => {
  it('accepts 4 emoji (8 UTF-16 units) under maxPromptChars 4 and refuses 5', async () => {
    const post = (prompt: string) =>
      fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: rolloutBody({ prompt }),
      });
    const four = '🦊🦊🦊🦊';
    expect(four.length).toBe(8);
    expect((await post(four)).statusCode).toBe(202);
    const refused = await post(`${four}🦊`);
    expect(refused.statusCode).toBe(400);
    expect(envelope(refused.body)).toMatchObject({
      code: 'PROTO_INVALID_REQUEST',
      details: { issues: [{ path: ['prompt'] }] },
    });
    // JSON Schema's maxLength counts code points too: the document says the same.
    const doc = (
      await fixture.coordinator.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json<{ paths: Record<string, Record<string, { requestBody: unknown }>> }>();
    expect(JSON.stringify(doc.paths['/v1/rollouts']?.['post']?.requestBody)).toContain(
      '"maxLength":4',
    );
  });
});

describe('one schema per route', () => {
  it('fastify validates with the very schemas the OpenAPI document is generated from', async () => {
    const { routes, services } = fixture.coordinator;
    const enqueue = routes.find((r) => r.method === 'POST' && r.url === '/v1/rollouts');
    expect(enqueue?.schema.body).toBe(services.rollouts.requestSchema);
    const doc = (
      await fixture.coordinator.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json<{
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>>;
    }>();
    // Query parameters are documented from the route's querystring schema.
    expect(doc.paths['/v1/weights/{component}']?.['get']?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query' })]),
    );
    // A query the schema refuses is refused by fastify with the coded envelope.
    const bad = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/rollouts?limit=0',
      headers: fixture.auth('viewer'),
    });
    expect(bad.statusCode).toBe(400);
    expect(envelope(bad.body)).toMatchObject({
      code: 'API_INVALID_PARAMS',
      details: { issues: [{ path: ['limit'] }] },
    });
  });

  it('an answer that fails its own schema is a coded 500 with a log line, and the server goes on', async () => {
    const lines: string[] = [];
    const coordinator = createCoordinator({
      redisUrl: server.url,
      prefix: `${fixture.prefix}-answers`,
      tokens: TOKENS,
      blobDir: fixture.blobDir,
      logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
    });
    await coordinator.start(0);
    try {
      // A damaged version record in Redis: the report built from it is not a WeightReport.
      const keys = fleetKeys(`${fixture.prefix}-answers`);
      await fixture.redis.hset(keys.weights('dit'), 'latest', '1', 'v:1', '{"sha256":"zz"}');
      const response = await coordinator.app.inject({
        method: 'GET',
        url: '/v1/weights/dit',
        headers: { authorization: `Bearer ${TOKENS.viewer}` },
      });
      expect(response.statusCode).toBe(500);
      expect(envelope(response.body)).toMatchObject({
        code: 'COORD_RESPONSE_INVALID',
        details: { route: 'GET /v1/weights/:component', status: 200 },
      });
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged).toContainEqual(
        expect.objectContaining({ level: 50, code: 'COORD_RESPONSE_INVALID' }),
      );
      const health = await coordinator.app.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      await fixture.redis.del(keys.weights('dit'));
    } finally {
      await coordinator.close();
    }
  });
});

describe('while Redis is down', () => {
  it('Redis-backed routes answer 503 API_REDIS_UNAVAILABLE, and work again once it is back', async () => {
    const own = await startRedisServer({ starter: 'redis-server' }); // killed and restarted
    const local = await startTestCoordinator(own.url, 'edge-redis-down');
    try {
      await registerFakeWorker(local.redis, local.prefix, fakeManifest('w-down'));
      const first = await local.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: local.auth('trainer'),
        payload: rolloutBody(),
      });
      expect(first.statusCode, first.body).toBe(202);
      const { id } = first.json<{ id: string }>();

      // The test's own client logs nothing while the server is away.
      local.redis.on('error', () => undefined);
      await own.kill('SIGKILL');
      const downAt = Date.now();
      const calls: [string, string, string, unknown?][] = [
        ['POST', '/v1/rollouts', 'trainer', rolloutBody()],
        ['GET', `/v1/rollouts/${id}`, 'viewer'],
        ['GET', '/v1/rollouts', 'viewer'],
        ['GET', '/v1/fleet', 'viewer'],
        ['GET', '/v1/lanes', 'viewer'],
        ['GET', '/v1/weights/dit', 'viewer'],
      ];
      for (const [method, url, role, payload] of calls) {
        const response = await local.coordinator.app.inject({
          method: method as 'GET' | 'POST',
          url,
          headers: local.auth(role as 'trainer' | 'viewer'),
          ...(payload === undefined ? {} : { payload: payload as object }),
        });
        expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(503);
        expect(envelope(response.body).code).toBe('API_REDIS_UNAVAILABLE');
        expect(response.headers['retry-after']).toBe('1');
      }
      // At once, not after ioredis's reconnect retries.
      expect(Date.now() - downAt).toBeLessThan(5_000);

      await own.restart();
      await waitFor(async () => {
        const health = await local.coordinator.app.inject({ method: 'GET', url: '/healthz' });
        return health.statusCode === 200;
      }, 'the coordinator to reconnect');
      // The restarted server kept nothing (no AOF): register again, then enqueue.
      await registerFakeWorker(local.redis, local.prefix, fakeManifest('w-down'));
      const again = await local.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: local.auth('trainer'),
        payload: rolloutBody(),
      });
      expect(again.statusCode, again.body).toBe(202);
    } finally {
      await local.close();
      await own.stop();
    }
  }, 60_000);
});
