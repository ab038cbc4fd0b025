import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { integerIn, parseSeeds, parseSha256 } from './cli-args.js';
import { parseWeightRequirements } from './commands/rollout-command.js';

describe('argument parsers', () => {
  it('parses seed lists and ranges and refuses duplicates and junk', () => {
    expect(parseSeeds('1,2,7')).toEqual([1, 2, 7]);
    expect(parseSeeds('0-3,9')).toEqual([0, 1, 2, 3, 9]);
    expect(() => parseSeeds('1,1')).toThrow(InvalidArgumentError);
    expect(() => parseSeeds('a')).toThrow(InvalidArgumentError);
    expect(() => parseSeeds('3-1')).toThrow(InvalidArgumentError);
  });

  it('parses a blob reference by its sha256', () => {
    const sha = 'AB'.repeat(32);
    expect(parseSha256(sha)).toEqual({ sha256: 'ab'.repeat(32) });
    expect(() => parseSha256('ab'.repeat(31))).toThrow(InvalidArgumentError);
    expect(() => parseSha256(`${'ab'.repeat(31)}zz`)).toThrow(InvalidArgumentError);
  });

  it('parses integers within bounds', () => {
    expect(integerIn(1, 16)('4')).toBe(4);
    expect(() => integerIn(1, 16)('0')).toThrow(InvalidArgumentError);
    expect(() => integerIn(1, 16)('2.5')).toThrow(InvalidArgumentError);
  });

  it('parses weight requirements', () => {
    expect(parseWeightRequirements('dit>=2,text_encoder=1')).toEqual({
      dit: { min: 2 },
      text_encoder: { exact: 1 },
    });
    expect(() => parseWeightRequirements('dit>2')).toThrow(InvalidArgumentError);
    expect(() => parseWeightRequirements('dit=0')).toThrow(InvalidArgumentError);
  });
});
