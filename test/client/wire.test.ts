// The SDK's transport against a real node:http server on a loopback port: what it sends, what it
// answers, and how each way a request can fail becomes a coded error. Run over both wires: the
// default (undici) and a caller's fetch (Node's global one here).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HttpTransport,
  resolveClientOptions,
  type FlowfleetClientOptions,
} from '@flowfleet/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejection } from './client-helpers.js';

type Handler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

let server: Server;
let base: string;
const handlers = new Map<string, Handler>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const handler = handlers.get(request.url ?? '');
      if (handler === undefined) response.writeHead(404).end();
      else handler(request, response, Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  handlers.set('/hang', () => {});
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const WIRES: [string, Partial<FlowfleetClientOptions>][] = [
  ['undici (default)', {}],
  ['fetch', { fetch: globalThis.fetch }],
];

describe.each(WIRES)('HttpTransport over %s', (_name, wire) => {
  const transport = (options: Partial<FlowfleetClientOptions> = {}) =>
    new HttpTransport(
      resolveClientOptions({ baseUrl: base, token: 't', retry: false, ...wire, ...options }),
    );

  it('sends the method, token and a body of several parts with its length', async () => {
    handlers.set('/echo', (request, response, body) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          method: request.method,
          length: request.headers['content-length'],
          type: request.headers['content-type'],
          token: request.headers['authorization'],
          extra: request.headers['x-extra'],
          body: body.toString(),
        }),
      );
    });
    const http = transport();
    const answer = await http.json(
      {
        method: 'PUT',
        path: '/echo',
        headers: { 'x-extra': 'yes' },
        bytes: [Buffer.from('héllo '), new TextEncoder().encode('world')],
        idempotent: true,
      },
      z.record(z.string(), z.string()),
    );
    expect(answer).toEqual({
      method: 'PUT',
      length: String(Buffer.byteLength('héllo world')),
      type: 'application/octet-stream',
      token: 'Bearer t',
      extra: 'yes',
      body: 'héllo world',
    });
    const missing = await rejection(
      http.bytes({ method: 'GET', path: '/nothing', idempotent: true }),
    );
    expect(missing.code).toBe('CLIENT_HTTP_ERROR');
    expect(missing.details).toMatchObject({ status: 404, body: '' });
    await http.close();
    await http.close();
  });

  it('refuses an answer past maxResponseBytes, by Content-Length or as it streams', async () => {
    handlers.set('/declared', (_request, response) => response.end(Buffer.alloc(100)));
    handlers.set('/chunked', (_request, response) => {
      response.writeHead(200); // no Content-Length: chunked
      response.write(Buffer.alloc(60));
      setImmediate(() => response.end(Buffer.alloc(60)));
    });
    const retries: unknown[] = [];
    const http = transport({
      retry: { attempts: 3, baseDelayMs: 1 },
      onRetry: (event) => retries.push(event),
    });
    const get = (path: string, maxResponseBytes: number) =>
      http.bytes({ method: 'GET', path, idempotent: true, call: { maxResponseBytes } });
    const declared = await rejection(get('/declared', 99));
    expect(declared.code).toBe('CLIENT_RESPONSE_TOO_LARGE');
    expect(declared.details).toMatchObject({ maxBytes: 99, url: `${base}/declared` });
    expect((await rejection(get('/chunked', 100))).code).toBe('CLIENT_RESPONSE_TOO_LARGE');
    expect((await get('/chunked', 120)).byteLength).toBe(120);
    expect(retries).toEqual([]); // the same answer would come again
    await http.close();
  });

  it('reads a long declared body sent in parts byte for byte, and refuses one cut short', async () => {
    // Past 64 KiB with a Content-Length, the undici wire copies parts into one buffer as they come.
    const whole = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31 + (i >> 9)) & 255));
    handlers.set('/long', (_request, response) => {
      response.writeHead(200, { 'content-length': String(whole.byteLength) });
      response.write(whole.subarray(0, 70_000));
      setImmediate(() => {
        response.write(whole.subarray(70_000, 200_001));
        setImmediate(() => response.end(whole.subarray(200_001)));
      });
    });
    handlers.set('/long-cut', (_request, response) => {
      response.writeHead(200, { 'content-length': String(whole.byteLength) });
      response.write(whole.subarray(0, 100_000));
      setImmediate(() => response.socket?.destroy());
    });
    const http = transport();
    const read = await http.bytes({ method: 'GET', path: '/long', idempotent: true });
    expect(Buffer.from(read).equals(whole)).toBe(true);
    const cut = await rejection(http.bytes({ method: 'GET', path: '/long-cut', idempotent: true }));
    expect(cut.code).toBe('CLIENT_UNREACHABLE');
    await http.close();
  });

  it('times out a try, and aborts with the signal’s reason', async () => {
    const http = transport();
    const timedOut = await rejection(
      http.bytes({ method: 'GET', path: '/hang', idempotent: true, call: { timeoutMs: 30 } }),
    );
    expect(timedOut.code).toBe('CLIENT_TIMEOUT');
    expect(timedOut.details).toMatchObject({ timeoutMs: 30, what: 'request' });

    const controller = new AbortController();
    const pending = rejection(
      http.bytes({
        method: 'GET',
        path: '/hang',
        idempotent: true,
        call: { signal: controller.signal },
      }),
    );
    const reason = new Error('trainer stopped');
    controller.abort(reason);
    const aborted = await pending;
    expect(aborted.code).toBe('CLIENT_ABORTED');
    expect(aborted.cause).toBe(reason);
    const already = await rejection(
      http.bytes({
        method: 'GET',
        path: '/hang',
        idempotent: true,
        call: { signal: controller.signal },
      }),
    );
    expect(already.code).toBe('CLIENT_ABORTED');
    await http.close();
  });

  it('reports a refused connection and an answer cut short as CLIENT_UNREACHABLE', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refusedBy = transport({ baseUrl: `http://127.0.0.1:${port}` });
    const refused = await rejection(
      refusedBy.bytes({ method: 'GET', path: '/', idempotent: true }),
    );
    expect(refused.code).toBe('CLIENT_UNREACHABLE');
    expect(refused.cause).toBeInstanceOf(Error);
    await refusedBy.close();

    handlers.set('/cut', (_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write(Buffer.alloc(10));
      setImmediate(() => response.socket?.destroy());
    });
    const http = transport();
    const cut = await rejection(http.bytes({ method: 'GET', path: '/cut', idempotent: true }));
    expect(cut.code).toBe('CLIENT_UNREACHABLE');
    await http.close();
  });
});
