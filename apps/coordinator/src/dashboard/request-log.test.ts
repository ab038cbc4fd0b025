import { describe, expect, it } from 'vitest';
import { redactTokenInUrl, serializeRequest } from './request-log.js';

describe('request log redaction', () => {
  it('replaces every token value in the query and nothing else', () => {
    expect(redactTokenInUrl('/?token=secret-value')).toBe('/?token=[redacted]');
    expect(redactTokenInUrl('/queues?a=1&token=s%2Bx&b=2')).toBe(
      '/queues?a=1&token=[redacted]&b=2',
    );
    expect(redactTokenInUrl('/x?TOKEN=s&token=t#frag')).toBe(
      '/x?TOKEN=[redacted]&token=[redacted]#frag',
    );
    expect(redactTokenInUrl('/v1/fleet?mytoken=keep')).toBe('/v1/fleet?mytoken=keep');
  });

  it('serializes a request like fastify does, with the URL redacted', () => {
    expect(
      serializeRequest({
        method: 'GET',
        url: '/?token=abc',
        host: 'h',
        ip: '127.0.0.1',
        headers: { authorization: 'Bearer abc' },
        socket: { remotePort: 5 },
      }),
    ).toEqual({
      method: 'GET',
      url: '/?token=[redacted]',
      version: undefined,
      host: 'h',
      remoteAddress: '127.0.0.1',
      remotePort: 5,
    });
  });
});
