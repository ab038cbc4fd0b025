// httpExchange against a real node:http server on a loopback port: what it sends, what it
// answers, and each way it can fail (the SDK and the worker map these kinds onto their codes).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpExchangeError, httpExchange } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<HttpExchangeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpExchangeError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('httpExchange', () => {
  it('sends the method, headers and a body of several parts with its length, and reads any status', async () => {
    handlers.set('/echo', (request, response, body) => {
      response.writeHead(207, 'Multi', { 'x-method': request.method ?? '' });
      response.end(
        JSON.stringify({
          length: request.headers['content-length'],
          token: request.headers['authorization'],
          body: body.toString(),
        }),
      );
    });
    const answer = await httpExchange({
      url: `${base}/echo`,
      method: 'PUT',
      headers: { authorization: 'Bearer t' },
      body: [Buffer.from('héllo '), new TextEncoder().encode('world')],
    });
    expect(answer.status).toBe(207);
    expect(answer.statusText).toBe('Multi');
    expect(answer.headers['x-method']).toBe('PUT');
    expect(JSON.parse(answer.body.toString())).toEqual({
      length: String(Buffer.byteLength('héllo world')),
      token: 'Bearer t',
      body: 'héllo world',
    });
    const missing = await httpExchange({ url: `${base}/nothing`, method: 'GET' });
    expect(missing.status).toBe(404);
    expect(missing.body.byteLength).toBe(0);
  });

  it('refuses an answer past maxResponseBytes, by Content-Length or as it streams', async () => {
    handlers.set('/declared', (_request, response) => response.end(Buffer.alloc(100)));
    handlers.set('/chunked', (_request, response) => {
      response.writeHead(200); // no Content-Length: chunked
      response.write(Buffer.alloc(60));
      setImmediate(() => response.end(Buffer.alloc(60)));
    });
    const declared = await failure(
      httpExchange({ url: `${base}/declared`, method: 'GET', maxResponseBytes: 99 }),
    );
    expect(declared.kind).toBe('too-large');
    const chunked = await failure(
      httpExchange({ url: `${base}/chunked`, method: 'GET', maxResponseBytes: 100 }),
    );
    expect(chunked.kind).toBe('too-large');
    const fits = await httpExchange({
      url: `${base}/chunked`,
      method: 'GET',
      maxResponseBytes: 120,
    });
    expect(fits.body.byteLength).toBe(120);
  });

  it('times out, aborts with the signal’s reason, and reports a refused connection or a cut answer as network', async () => {
    handlers.set('/hang', () => {});
    const timedOut = await failure(
      httpExchange({ url: `${base}/hang`, method: 'GET', timeoutMs: 30 }),
    );
    expect(timedOut.kind).toBe('timeout');

    const controller = new AbortController();
    const pending = failure(
      httpExchange({ url: `${base}/hang`, method: 'GET', signal: controller.signal }),
    );
    const reason = new Error('trainer stopped');
    controller.abort(reason);
    const aborted = await pending;
    expect(aborted.kind).toBe('aborted');
    expect(aborted.cause).toBe(reason);
    expect(
      (
        await failure(
          httpExchange({ url: `${base}/hang`, method: 'GET', signal: controller.signal }),
        )
      ).kind,
    ).toBe('aborted');

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await failure(
      httpExchange({ url: `http://127.0.0.1:${port}/`, method: 'GET' }),
    );
    expect(refused.kind).toBe('network');

    handlers.set('/cut', (_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write(Buffer.alloc(10));
      setImmediate(() => response.socket?.destroy());
    });
    expect((await failure(httpExchange({ url: `${base}/cut`, method: 'GET' }))).kind).toBe(
      'network',
    );
    expect((await failure(httpExchange({ url: 'not a url', method: 'GET' }))).kind).toBe('network');
  });
});
