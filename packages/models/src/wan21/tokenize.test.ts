import { describe, expect, it } from 'vitest';
import { tokenize } from './tokenize.js';
import { PAD_TOKEN, WAN21_MINI } from './wan21-config.js';

describe('tokenize', () => {
  it('emits UTF-8 bytes padded with 256, [B, L] row-major', () => {
    const tokens = tokenize(['hi', 'é'], WAN21_MINI);
    expect(tokens.length).toBe(2 * 16);
    expect([...tokens.slice(0, 3)]).toEqual([104, 105, PAD_TOKEN]);
    expect([...tokens.slice(16, 19)]).toEqual([0xc3, 0xa9, PAD_TOKEN]);
    expect(tokens.slice(19, 32).every((t) => t === PAD_TOKEN)).toBe(true);
  });

  it('truncates to textLen bytes', () => {
    const tokens = tokenize(['a cat playing the piano on a beach'], WAN21_MINI);
    expect(tokens.length).toBe(16);
    expect(String.fromCharCode(...tokens)).toBe('a cat playing th');
  });

  it('maps an empty prompt to all padding and no prompts to an empty array', () => {
    expect([...tokenize([''], WAN21_MINI)]).toEqual(new Array(16).fill(PAD_TOKEN));
    expect(tokenize([], WAN21_MINI).length).toBe(0);
  });
});
