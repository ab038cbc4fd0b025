import { z } from 'zod';

/**
 * The value of a JSON text read from Redis, or `undefined` when there is none or it is not JSON.
 * Redis data is untrusted (STYLE.md 11): the caller checks the value with its schema, usually
 * through `parseRedisJson`.
 */
export function jsonFromRedis(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A record read from Redis, checked: JSON first, then `schema`. Text that is absent or not JSON
 * is a failed parse whose one issue says so (`not JSON`), so callers handle one result shape.
 */
export function parseRedisJson<T>(
  schema: z.ZodType<T>,
  text: string | null | undefined,
): z.ZodSafeParseResult<T> {
  const value = jsonFromRedis(text);
  if (value === undefined) {
    const message = text === null || text === undefined ? 'absent' : 'not JSON';
    return {
      success: false,
      error: new z.ZodError([{ code: 'custom', message, path: [], input: text }]) as z.ZodError<T>,
    };
  }
  return schema.safeParse(value);
}
