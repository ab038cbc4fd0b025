import { describe, expect, it } from 'vitest';
import { versionStatus } from './weight-registry.js';

describe('versionStatus', () => {
  it('is loaded as soon as one worker acked ok', () => {
    expect(versionStatus({ a: 'failed', b: 'ok' }, ['a', 'b', 'c'], false)).toBe('loaded');
  });
  it('is failed when nobody loaded it and no live worker is still pending', () => {
    expect(versionStatus({ a: 'refused', b: 'failed' }, ['a', 'b'], false)).toBe('failed');
    expect(versionStatus({ a: 'refused' }, [], false)).toBe('failed');
  });
  it('is pending while a live worker has not answered, superseded once a newer one exists', () => {
    expect(versionStatus({ a: 'refused' }, ['a', 'b'], false)).toBe('pending');
    expect(versionStatus({}, ['a'], false)).toBe('pending');
    expect(versionStatus({}, ['a'], true)).toBe('superseded');
  });
});
