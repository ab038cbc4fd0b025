import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { parseSentinelUrl, redactSentinelUrl } from './sentinel-url.js';

describe('parseSentinelUrl', () => {
  it('reads the sentinels, the master name and both sets of credentials', () => {
    expect(
      parseSentinelUrl(
        'redis://u:p%3Aw@10.0.0.1:26379,10.0.0.2,[fe80::1]:26400/my%20master?sentinelUsername=su&sentinelPassword=sp',
      ),
    ).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: 'fe80::1', port: 26400 },
      ],
      name: 'my master',
      username: 'u',
      password: 'p:w',
      sentinelUsername: 'su',
      sentinelPassword: 'sp',
      tls: false,
    });
    expect(parseSentinelUrl('rediss://s:1/m')).toEqual({
      sentinels: [{ host: 's', port: 1 }],
      name: 'm',
      tls: true,
    });
  });

  it('refuses what is not a sentinel URL, coded, and never shows a password', () => {
    for (const url of [
      'http://s:1/m',
      'redis://:secret@s:1',
      'redis://:secret@s:1/',
      'redis://:secret@s:1/a/b',
      'redis://:secret@s:99999/m',
      'redis://:secret@s:1,,t:2/m',
      'redis://:secret@s:1/m?password=x',
    ]) {
      let error: unknown;
      try {
        parseSentinelUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(isFlowfleetError(error, 'REDIS_URL_INVALID'), url).toBe(true);
      expect((error as Error).message, url).not.toContain('secret');
    }
    expect(redactSentinelUrl('redis://u:pw@s:1/m?sentinelPassword=spw')).toBe(
      'redis://u:***@s:1/m?sentinelPassword=***',
    );
  });
});
