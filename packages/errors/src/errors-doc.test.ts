import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RETIRED_ERROR_CODES } from './codes.js';
import { renderErrorsDoc } from './errors-doc.js';
import { FlowfleetError, isFlowfleetError } from './flowfleet-error.js';

const DOC = new URL('../../../docs/errors.md', import.meta.url);

describe('docs/errors.md', () => {
  it('matches the code table exactly (run `npm run docs:errors` after adding a code)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(renderErrorsDoc());
  });

  it('lists every code once, each with a package prefix', () => {
    const documented = [...readFileSync(DOC, 'utf8').matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map(
      (m) => m[1],
    );
    expect(documented).toEqual(Object.keys(ERROR_CODES));
    for (const code of documented) expect(code).toMatch(/^[A-Z]+_[A-Z0-9_]+$/);
  });

  it('never gives a live code the name of a retired one', () => {
    const live = new Set(Object.keys(ERROR_CODES));
    expect(RETIRED_ERROR_CODES.filter((code) => live.has(code))).toEqual([]);
    expect(new Set(RETIRED_ERROR_CODES).size).toBe(RETIRED_ERROR_CODES.length);
    for (const code of RETIRED_ERROR_CODES)
      expect(readFileSync(DOC, 'utf8')).toContain(`\`${code}\``);
  });
});

describe('FlowfleetError', () => {
  it('carries code, details and cause, and serialises to the envelope', () => {
    const cause = new Error('disk');
    const err = new FlowfleetError('REG_KEY_ARITY', 'bad key', { details: { got: 3 }, cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('REG_KEY_ARITY');
    expect(err.cause).toBe(cause);
    expect(err.httpStatus).toBe(500);
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      code: 'REG_KEY_ARITY',
      message: 'bad key',
      details: { got: 3 },
    });
    expect(isFlowfleetError(err, 'REG_KEY_ARITY')).toBe(true);
    expect(isFlowfleetError(err, 'PLAT_NO_KERNEL')).toBe(false);
    expect(isFlowfleetError(new Error('x'))).toBe(false);
  });
});
