import { describe, expect, it } from 'vitest';
import { groupBySlot, hashTagOf, keySlot } from './key-slot.js';

describe('keySlot', () => {
  it('answers what CLUSTER KEYSLOT answers (values from the Redis docs)', () => {
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
  });

  it('hashes only a non-empty first {tag}', () => {
    expect(hashTagOf('{ff}:workers')).toBe('ff');
    expect(hashTagOf('{ff:lane-ab}:bull:lane-ab:wait')).toBe('ff:lane-ab');
    expect(hashTagOf('foo{}{bar}')).toBe('foo{}{bar}');
    expect(hashTagOf('foo{{bar}}zap')).toBe('{bar');
    expect(hashTagOf('no-tag')).toBe('no-tag');
  });

  it('groups keys of one slot together, in first-seen order', () => {
    expect(groupBySlot(['{a}:1', '{b}:1', '{a}:2'])).toEqual([['{a}:1', '{a}:2'], ['{b}:1']]);
  });
});
