import { describe, expect, it } from 'vitest';
import {
  authorizationOf,
  cookieToken,
  queryToken,
  queuesCookie,
  withoutToken,
} from './browser-token.js';

describe('browser tokens', () => {
  it('reads one non-empty ?token= and nothing else', () => {
    expect(queryToken({ token: 'abc' })).toBe('abc');
    expect(queryToken({ token: '' })).toBeUndefined();
    expect(queryToken({ token: ['a', 'b'] })).toBeUndefined();
    expect(queryToken(undefined)).toBeUndefined();
  });

  it('finds the /queues cookie among others and decodes it', () => {
    expect(cookieToken('a=1; flowfleet_queues=t%2Bk; b=2')).toBe('t+k');
    expect(cookieToken('xflowfleet_queues=nope')).toBeUndefined();
    expect(cookieToken('flowfleet_queues=%E0%A4%A')).toBeUndefined();
    expect(cookieToken(undefined)).toBeUndefined();
  });

  it('API routes read the header only; browser routes prefer ?token=, then header, then cookie', () => {
    const request = {
      headers: { authorization: 'Bearer header', cookie: 'flowfleet_queues=cookie' },
      query: { token: 'query' },
    };
    expect(authorizationOf(request, {})).toBe('Bearer header');
    expect(authorizationOf(request, { browserToken: 'query' })).toBe('Bearer query');
    const noQuery = { ...request, query: {} };
    expect(authorizationOf(noQuery, { browserToken: 'query-or-cookie' })).toBe('Bearer header');
    const cookieOnly = { headers: { cookie: 'flowfleet_queues=cookie' }, query: {} };
    expect(authorizationOf(cookieOnly, { browserToken: 'query-or-cookie' })).toBe('Bearer cookie');
    expect(authorizationOf(cookieOnly, { browserToken: 'query' })).toBeUndefined();
    expect(authorizationOf(cookieOnly, {})).toBeUndefined();
  });

  it('sets an HttpOnly, SameSite=Strict cookie scoped to /queues, Secure over https', () => {
    expect(queuesCookie('a b', false)).toBe(
      'flowfleet_queues=a%20b; Path=/queues; HttpOnly; SameSite=Strict',
    );
    expect(queuesCookie('t', true)).toMatch(/; Secure$/);
  });

  it('drops the token from a URL and keeps the rest', () => {
    expect(withoutToken('/queues?token=abc')).toBe('/queues');
    expect(withoutToken('/queues/queue/x?a=1&token=abc&b=2')).toBe('/queues/queue/x?a=1&b=2');
  });
});
