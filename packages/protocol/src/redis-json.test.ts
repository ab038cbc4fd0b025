import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonFromRedis, parseRedisJson } from './redis-json.js';

const Record = z.object({ version: z.int() });

describe('JSON read from Redis', () => {
  it('answers the value of JSON text, undefined for none or for text that is not JSON', () => {
    expect(jsonFromRedis('{"version":3}')).toEqual({ version: 3 });
    expect(jsonFromRedis('null')).toBeNull();
    expect(jsonFromRedis(null)).toBeUndefined();
    expect(jsonFromRedis(undefined)).toBeUndefined();
    expect(jsonFromRedis('{"version":')).toBeUndefined();
  });

  it('checks the value with the schema; not JSON and absent are failed parses that say so', () => {
    expect(parseRedisJson(Record, '{"version":3}')).toEqual({
      success: true,
      data: { version: 3 },
    });
    const wrong = parseRedisJson(Record, '{"version":"3"}');
    expect(wrong.success).toBe(false);
    expect(wrong.error?.issues[0]?.path).toEqual(['version']);
    expect(parseRedisJson(Record, '{').error?.issues[0]?.message).toBe('not JSON');
    expect(parseRedisJson(Record, null).error?.issues[0]?.message).toBe('absent');
  });
});
