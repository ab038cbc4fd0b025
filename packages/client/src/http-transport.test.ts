import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveClientOptions, type FlowfleetClientOptions } from './client-options.js';
import { HttpTransport, type HttpRequest } from './http-transport.js';

// A stand-in fetch records each call and answers from a script: these tests pin the error
// mapping and retry rules without a network (test/client runs the same client against a real
// coordinator).

type Answer = Response | Error | ((init: RequestInit) => Promise<Response>);

function scriptedFetch(answers: Answer[]) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetchFn = async (url: string | URL | Request, init: RequestInit = {}) => {
    calls.push({ url: String(url), init });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    if (typeof answer === 'function') return answer(init);
    return (answer as Response).clone();
  };
  return { calls, fetch: fetchFn as typeof fetch };
}

function transport(
  fetchFn: typeof fetch,
  options: Partial<FlowfleetClientOptions> = {},
  token: string | null = 'secret-token',
) {
  return new HttpTransport(
    resolveClientOptions({
      baseUrl: 'http://coordinator.test/',
      ...(token === null ? {} : { token }),
      fetch: fetchFn,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      ...options,
    }),
  );
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const GET: HttpRequest = { method: 'GET', path: '/v1/thing', idempotent: true };
const POST: HttpRequest = { method: 'POST', path: '/v1/thing', json: { a: 1 }, idempotent: false };
const Thing = z.object({ ok: z.literal(true) });

async function failure(promise: Promise<unknown>): Promise<FlowfleetError> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('HttpTransport', () => {
  it('sends the bearer token and a JSON body, and validates the answer', async () => {
    const { calls, fetch } = scriptedFetch([json(200, { ok: true, extra: 1 })]);
    const value = await transport(fetch).json(POST, Thing);
    expect(value).toEqual({ ok: true });
    expect(calls[0]?.url).toBe('http://coordinator.test/v1/thing');
    const headers = calls[0]?.init.headers as Record<string, string>;
    expect(headers['authorization']).toBe('Bearer secret-token');
    expect(headers['content-type']).toBe('application/json');
    expect(calls[0]?.init.body).toBe('{"a":1}');
  });

  it("maps an error envelope with a known code onto that code and the server's details", async () => {
    const { fetch } = scriptedFetch([
      json(409, { code: 'API_NO_CAPACITY', message: 'no live worker', details: { workers: [] } }),
    ]);
    const error = await failure(transport(fetch).json(POST, Thing));
    expect(error.code).toBe('API_NO_CAPACITY');
    expect(error.message).toBe('no live worker');
    expect(error.details).toEqual({ workers: [] });
  });

  it('maps an unknown code or a non-envelope body onto CLIENT_HTTP_ERROR', async () => {
    const newer = scriptedFetch([
      json(418, { code: 'API_FROM_THE_FUTURE', message: 'hm', details: {} }),
    ]);
    const unknown = await failure(transport(newer.fetch).json(POST, Thing));
    expect(unknown.code).toBe('CLIENT_HTTP_ERROR');
    expect(unknown.details).toMatchObject({
      status: 418,
      envelope: { code: 'API_FROM_THE_FUTURE' },
    });
    const html = scriptedFetch([new Response('<h1>Bad gateway</h1>', { status: 502 })]);
    const proxy = await failure(transport(html.fetch, { retry: false }).json(GET, Thing));
    expect(proxy.code).toBe('CLIENT_HTTP_ERROR');
    expect(proxy.details).toMatchObject({
      status: 502,
      body: '<h1>Bad gateway</h1>',
      method: 'GET',
    });
  });

  it('answers CLIENT_BAD_RESPONSE for a body that is not JSON or fails the schema', async () => {
    const notJson = scriptedFetch([new Response('hello', { status: 200 })]);
    expect((await failure(transport(notJson.fetch).json(GET, Thing))).code).toBe(
      'CLIENT_BAD_RESPONSE',
    );
    const wrong = scriptedFetch([json(200, { ok: 'yes' })]);
    const error = await failure(transport(wrong.fetch).json(GET, Thing));
    expect(error.code).toBe('CLIENT_BAD_RESPONSE');
    expect(error.details).toMatchObject({ issues: [{ path: ['ok'] }] });
  });

  it('retries an idempotent call on 503 and on network failures, then succeeds', async () => {
    const { calls, fetch } = scriptedFetch([
      json(503, { code: 'COORD_REDIS_UNAVAILABLE', message: 'down', details: {} }),
      new TypeError('fetch failed'),
      json(200, { ok: true }),
    ]);
    expect(await transport(fetch).json(GET, Thing)).toEqual({ ok: true });
    expect(calls).toHaveLength(3);
  });

  it('sends a non-idempotent call once, and gives up after `attempts` tries', async () => {
    const once = scriptedFetch([new TypeError('fetch failed')]);
    const error = await failure(transport(once.fetch).json(POST, Thing));
    expect(error.code).toBe('CLIENT_UNREACHABLE');
    expect((error.cause as Error).message).toBe('fetch failed');
    expect(once.calls).toHaveLength(1);
    const down = scriptedFetch([new TypeError('fetch failed')]);
    expect((await failure(transport(down.fetch).json(GET, Thing))).code).toBe('CLIENT_UNREACHABLE');
    expect(down.calls).toHaveLength(3);
  });

  it('does not retry a 4xx other than 429', async () => {
    const { calls, fetch } = scriptedFetch([
      json(404, { code: 'API_JOB_NOT_FOUND', message: 'no job', details: { id: 'x' } }),
    ]);
    expect((await failure(transport(fetch).json(GET, Thing))).code).toBe('API_JOB_NOT_FOUND');
    expect(calls).toHaveLength(1);
  });

  const hang = (init: RequestInit) =>
    new Promise<Response>((_resolve, reject) => {
      init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
    });

  it('answers CLIENT_TIMEOUT when a try takes longer than timeoutMs', async () => {
    const { fetch } = scriptedFetch([hang]);
    const error = await failure(transport(fetch, { timeoutMs: 20 }).json(GET, Thing));
    expect(error.code).toBe('CLIENT_TIMEOUT');
    expect(error.details).toMatchObject({ timeoutMs: 20, what: 'request' });
  });

  it("answers CLIENT_ABORTED with the signal's reason when the caller aborts", async () => {
    const { fetch } = scriptedFetch([hang]);
    const controller = new AbortController();
    const pending = failure(
      transport(fetch).json({ ...GET, call: { signal: controller.signal } }, Thing),
    );
    const reason = new Error('trainer stopped');
    controller.abort(reason);
    const error = await pending;
    expect(error.code).toBe('CLIENT_ABORTED');
    expect(error.cause).toBe(reason);
    const already = await failure(
      transport(fetch).json({ ...GET, call: { signal: controller.signal } }, Thing),
    );
    expect(already.code).toBe('CLIENT_ABORTED');
  });

  it('sends bytes as application/octet-stream and reads bytes and text back', async () => {
    const { calls, fetch } = scriptedFetch([
      new Response(new Uint8Array([1, 2, 3])),
      new Response('m 1'),
    ]);
    const http = transport(fetch, {}, null);
    const bytes = await http.bytes({
      method: 'PUT',
      path: '/b',
      bytes: new Uint8Array([9]),
      idempotent: true,
    });
    expect(Array.from(bytes)).toEqual([1, 2, 3]);
    expect(await http.text(GET)).toBe('m 1');
    const headers = calls[0]?.init.headers as Record<string, string>;
    expect(headers['content-type']).toBe('application/octet-stream');
    expect(headers['authorization']).toBeUndefined();
  });
});

describe('resolveClientOptions', () => {
  it('fills defaults and trims the base URL', () => {
    const options = resolveClientOptions({ baseUrl: 'http://h:1//' });
    expect(options).toMatchObject({
      baseUrl: 'http://h:1',
      timeoutMs: 30_000,
      retry: { attempts: 3, baseDelayMs: 200, maxDelayMs: 2_000 },
    });
    expect(resolveClientOptions({ baseUrl: 'https://h', retry: false }).retry.attempts).toBe(1);
  });

  it.each([
    ['a relative base URL', { baseUrl: '/v1' }],
    ['a non-http base URL', { baseUrl: 'ftp://h' }],
    ['a zero timeout', { baseUrl: 'http://h', timeoutMs: 0 }],
    ['a fractional attempt count', { baseUrl: 'http://h', retry: { attempts: 1.5 } }],
    ['an empty token', { baseUrl: 'http://h', token: '' }],
  ])('refuses %s with CLIENT_INVALID_OPTIONS', (_name, options) => {
    let error: unknown;
    try {
      resolveClientOptions(options as FlowfleetClientOptions);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FlowfleetError);
    expect((error as FlowfleetError).code).toBe('CLIENT_INVALID_OPTIONS');
  });
});
