import { InvalidArgumentError } from 'commander';

/** A commander parser for an integer in [min, max]. */
export function integerIn(min: number, max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
}

/** A commander parser for a finite number in [min, max]. */
export function numberIn(min: number, max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
      throw new InvalidArgumentError(`expected a number from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
}

/**
 * Parses a seed list: comma-separated integers and inclusive ranges, `1,2,7` or `0-3`.
 * @throws InvalidArgumentError for anything else, or duplicates
 */
export function parseSeeds(raw: string): number[] {
  const seeds: number[] = [];
  for (const part of raw.split(',')) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (match === null) throw new InvalidArgumentError(`"${part}" is not a seed or a range a-b`);
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (
      !Number.isSafeInteger(from) ||
      !Number.isSafeInteger(to) ||
      to < from ||
      to - from >= 1024
    ) {
      throw new InvalidArgumentError(`"${part}" is not a usable seed range`);
    }
    for (let seed = from; seed <= to; seed++) seeds.push(seed);
  }
  if (new Set(seeds).size !== seeds.length)
    throw new InvalidArgumentError('seeds must be distinct');
  return seeds;
}

/**
 * A commander parser for a blob reference by its sha256 (64 hex digits, lowercased), e.g. an
 * uploaded embedding for `--prompt-embeds`: answers `{ sha256 }`, as a request names it.
 */
export function parseSha256(raw: string): { sha256: string } {
  const sha256 = raw.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256))
    throw new InvalidArgumentError(`expected a sha256 (64 hex digits), got "${raw}"`);
  return { sha256 };
}

/** A commander parser for one of `choices`. */
export function oneOf<T extends string>(choices: readonly T[]): (raw: string) => T {
  return (raw) => {
    if (!(choices as readonly string[]).includes(raw)) {
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}, got "${raw}"`);
    }
    return raw as T;
  };
}
