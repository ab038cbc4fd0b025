import { compareCodePoints } from './code-point-order.js';

/**
 * JSON with object keys sorted by code point at every depth and no whitespace, so equal values
 * serialise to equal bytes whatever order their keys were built in (a rollout file's metadata, a
 * requirements hash). Written by hand rather than through `JSON.stringify` of a sorted object,
 * because JS objects list integer-like keys ("2", "10") first in numeric order. Arrays keep their
 * order; `undefined` properties are dropped and `undefined` array items become `null`, as
 * `JSON.stringify` does; numbers use its shortest round-trip form.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => compareCodePoints(a, b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
