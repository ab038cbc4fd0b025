// The one retry policy (packages/client/src/retry-policy.ts) against a real loopback server that
// fails a scripted number of times: what is retried, what is not, Retry-After, the deadline, and
// abort during a wait. The worker's blob downloads and result uploads go through the same code.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  FlowfleetClient,
  HttpTransport,
  resolveClientOptions,
  type FlowfleetClientOptions,
  type HttpRequest,
  type RetryEvent,
} from '@flowfleet/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejection } from './client-helpers.js';

/** How the server answers the next tries: a status, `hang` (no answer), or `reset` (socket cut). */
type Step = number | { status: number; headers: Record<string, string> } | 'hang' | 'reset';

const LANE = 'lane-0123456789abcdef';
let server: Server;
let base: string;
let script: Step[] = [];
let tries = 0;
const keys: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      tries += 1;
      keys.push(request.headers['idempotency-key'] as string | undefined);
      const step = script.shift() ?? 200;
      if (step === 'hang') return;
      if (step === 'reset') {
        request.socket.destroy();
        return;
      }
      const { status, headers } = typeof step === 'number' ? { status: step, headers: {} } : step;
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(
        JSON.stringify(
          status >= 300
            ? { code: 'COORD_REDIS_UNAVAILABLE', message: 'not now', details: {} }
            : request.url === '/v1/rollouts'
              ? { id: `${LANE}.${keys.at(-1)}`, lane: LANE, status: 'queued', eligibleWorkers: 1 }
              : { ok: true },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  tries = 0;
  keys.length = 0;
});

function transport(options: Partial<FlowfleetClientOptions> = {}) {
  const events: RetryEvent[] = [];
  const http = new HttpTransport(
    resolveClientOptions({
      baseUrl: base,
      retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
      onRetry: (event) => events.push(event),
      ...options,
    }),
  );
  return { http, events };
}

const GET: HttpRequest = { method: 'GET', path: '/thing', idempotent: true };
const POST: HttpRequest = { method: 'POST', path: '/thing', json: { a: 1 }, idempotent: false };

describe('the retry policy', () => {
  it('retries an idempotent request through 503, 502, 429, 408, a reset and a timeout', async () => {
    script = [503, 502, 429, 408, 'reset', 'hang'];
    // The timeout must outlast every answered try on a busy machine (the hang alone should hit it).
    const { http, events } = transport({
      timeoutMs: 1_000,
      retry: { attempts: 7, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(await http.text(GET)).toBe('{"ok":true}');
    expect(tries).toBe(7);
    // Each error answer carries the server's envelope (its code), the others the client's codes.
    expect(events.map((e) => e.error.code)).toEqual([
      'COORD_REDIS_UNAVAILABLE',
      'COORD_REDIS_UNAVAILABLE',
      'COORD_REDIS_UNAVAILABLE',
      'COORD_REDIS_UNAVAILABLE',
      'CLIENT_UNREACHABLE',
      'CLIENT_TIMEOUT',
    ]);
    expect(events.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events[0]).toMatchObject({ method: 'GET', path: '/thing' });
    await http.close();
  });

  it('gives up after `attempts` tries with the last error', async () => {
    script = [503, 503, 503, 503, 503];
    const { http, events } = transport();
    const error = await rejection(http.text(GET));
    expect(error.code).toBe('COORD_REDIS_UNAVAILABLE');
    expect(tries).toBe(4);
    expect(events).toHaveLength(3);
    // Backoff doubles from 5 ms, jittered to [½, 1] of it.
    events.forEach((event, i) => {
      expect(event.delayMs).toBeGreaterThanOrEqual((5 * 2 ** i) / 2);
      expect(event.delayMs).toBeLessThanOrEqual(5 * 2 ** i);
    });
    await http.close();
  });

  it('does not retry a 4xx, a 500, or a non-idempotent request that reached the server', async () => {
    const { http, events } = transport();
    for (const status of [400, 404, 409, 500, 501]) {
      script = [status];
      tries = 0;
      await rejection(http.text(GET));
      expect(tries).toBe(1);
    }
    script = [503];
    tries = 0;
    expect((await rejection(http.text(POST))).code).toBe('COORD_REDIS_UNAVAILABLE');
    expect(tries).toBe(1);
    script = ['reset'];
    tries = 0;
    expect((await rejection(http.text(POST))).code).toBe('CLIENT_UNREACHABLE');
    expect(tries).toBe(1);
    expect(events).toEqual([]);
    await http.close();
  });

  it('retries even a non-idempotent request when the connection was refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { http, events } = transport({ baseUrl: `http://127.0.0.1:${port}` });
    expect((await rejection(http.text(POST))).code).toBe('CLIENT_UNREACHABLE');
    expect(events).toHaveLength(3);
    await http.close();
  });

  it('retries an enqueue, every try carrying the same Idempotency-Key', async () => {
    script = [503, 'reset'];
    const client = FlowfleetClient.create({
      baseUrl: base,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const request = { model: 'wan21-mini', prompt: 'p', seeds: [1] };
    const enqueued = await client.enqueueRollouts(request);
    expect(tries).toBe(3);
    const [key] = keys;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys).toEqual([key, key, key]);
    expect(enqueued.id).toBe(`${LANE}.${key}`);
    // Each enqueue gets its own key unless the caller names one.
    await client.enqueueRollouts(request);
    await client.enqueueRollouts(request, { idempotencyKey: key as string });
    expect(keys[3]).not.toBe(key);
    expect(keys[4]).toBe(key);
    await client.close();
  });

  it("waits for the server's Retry-After when it is longer than the backoff", async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' } }];
    const { http, events } = transport({ retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 5 } });
    const started = Date.now();
    expect(await http.text(GET)).toBe('{"ok":true}');
    expect(events[0]?.delayMs).toBe(1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    await http.close();
  });

  it('starts no retry past the deadline, and shortens the last wait to it', async () => {
    const DEADLINE_MS = 300;
    script = Array.from({ length: 100 }, () => 503);
    const { http, events } = transport({
      retry: {
        attempts: Number.POSITIVE_INFINITY,
        baseDelayMs: 40,
        maxDelayMs: 40,
        deadlineMs: DEADLINE_MS,
      },
    });
    const started = Date.now();
    expect((await rejection(http.text(GET))).code).toBe('COORD_REDIS_UNAVAILABLE');
    const elapsedMs = Date.now() - started;
    // The last wait ends at the deadline, and one try (a loopback 503) follows it.
    expect(elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(elapsedMs).toBeLessThan(DEADLINE_MS + 1_000);
    // Waits of 20–40 ms, the last one shortened: at most DEADLINE_MS / 20 of them fit, and with
    // tries far shorter than the deadline (even on a busy machine), at least 2.
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.length).toBeLessThanOrEqual(DEADLINE_MS / 20);
    expect(tries).toBe(events.length + 1);
    const { http: once } = transport({ retry: { deadlineMs: 0 } });
    tries = 0;
    await rejection(once.text(GET));
    expect(tries).toBe(1);
    await Promise.all([http.close(), once.close()]);
  });

  it('a per-call retry overrides the client’s, and `false` sends once', async () => {
    script = [503, 503, 503];
    const { http } = transport();
    await rejection(http.text({ ...GET, call: { retry: false } }));
    expect(tries).toBe(1);
    expect(await http.text({ ...GET, call: { retry: { attempts: 3, baseDelayMs: 1 } } })).toBe(
      '{"ok":true}',
    );
    expect(tries).toBe(4);
    const invalid = await rejection(http.text({ ...GET, call: { retry: { attempts: 0 } } }));
    expect(invalid.code).toBe('CLIENT_INVALID_OPTIONS');
    await http.close();
  });

  it('stops a wait at once when the signal fires', async () => {
    script = [503];
    const { http, events } = transport({
      retry: { attempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const controller = new AbortController();
    const pending = rejection(http.text({ ...GET, call: { signal: controller.signal } }));
    await expect.poll(() => events.length, { timeout: 5_000, interval: 5 }).toBe(1);
    const reason = new Error('stop');
    const started = Date.now();
    controller.abort(reason);
    const error = await pending;
    expect(error.code).toBe('CLIENT_ABORTED');
    expect(error.cause).toBe(reason);
    expect(Date.now() - started).toBeLessThan(1_000);
    await http.close();
  });
});
