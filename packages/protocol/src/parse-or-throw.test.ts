import { FlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorEnvelopeOf } from './error-envelope.js';
import { formatPath, parseOrThrow, type ValidationDetails } from './parse-or-throw.js';

const Schema = z.strictObject({ a: z.object({ b: z.array(z.int()) }), c: z.string() });

function thrown(fn: () => unknown): FlowfleetError<'API_INVALID_BODY', ValidationDetails> {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FlowfleetError);
    return error as FlowfleetError<'API_INVALID_BODY', ValidationDetails>;
  }
  throw new Error('expected a throw');
}

describe('parseOrThrow', () => {
  it('returns the parsed value', () => {
    expect(parseOrThrow(Schema, { a: { b: [1] }, c: 'x' }, 'API_INVALID_BODY')).toEqual({
      a: { b: [1] },
      c: 'x',
    });
  });

  it('throws the given code with every issue and its path', () => {
    const error = thrown(() =>
      parseOrThrow(Schema, { a: { b: [1, 'two'] }, d: 1 }, 'API_INVALID_BODY', 'body'),
    );
    expect(error.code).toBe('API_INVALID_BODY');
    expect(error.details.issues.map((issue) => issue.path)).toEqual([['a', 'b', 1], ['c'], []]);
    expect(error.message).toMatch(/^invalid body: a\.b\[1\]: .+ \(and 2 more\)$/);
    expect(errorEnvelopeOf(error)).toMatchObject({
      status: 400,
      body: { code: 'API_INVALID_BODY', details: { issues: error.details.issues } },
    });
  });

  it('caps the number of issues it reports', () => {
    const error = thrown(() =>
      parseOrThrow(
        z.array(z.int()),
        Array.from({ length: 80 }, () => 'x'),
        'API_INVALID_BODY',
      ),
    );
    expect(error.details.issues).toHaveLength(50);
    expect(error.message).toMatch(/\(and 79 more\)$/);
  });

  it('formats paths', () => {
    expect(formatPath([])).toBe('(root)');
    expect(formatPath(['seeds', 2])).toBe('seeds[2]');
    expect(formatPath(['a', 'b', 0, 'c'])).toBe('a.b[0].c');
  });
});
