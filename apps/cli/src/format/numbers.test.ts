import { describe, expect, it } from 'vitest';
import { shortId } from './numbers.js';

describe('shortId', () => {
  it('shows the start of the unique part of a rollout id, not its lane', () => {
    expect(shortId('lane-0123456789abcdef.5c7e1d2a-0b1c-4d2e-8f3a-9b8c7d6e5f4a')).toBe('5c7e1d2a');
    expect(shortId('5c7e1d2a-0b1c-4d2e-8f3a-9b8c7d6e5f4a')).toBe('5c7e1d2a');
    expect(shortId('w1')).toBe('w1');
  });
});
