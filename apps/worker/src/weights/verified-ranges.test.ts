import { describe, expect, it } from 'vitest';
import { VerifiedRanges } from './verified-ranges.js';

const SHA = 'a'.repeat(64);
const bytes = (from: number, length: number) =>
  Uint8Array.from({ length }, (_, i) => (from + i) % 256);
const joined = (pieces: Uint8Array[] | undefined) =>
  pieces === undefined ? undefined : Buffer.concat(pieces.map((p) => Buffer.from(p)));

describe('VerifiedRanges', () => {
  it('reads a range only when verified chunks cover it end to end, across chunks', () => {
    const ranges = new VerifiedRanges();
    ranges.put(SHA, 100, bytes(100, 50));
    ranges.put(SHA, 150, bytes(150, 50));
    expect(joined(ranges.read({ sha256: SHA, begin: 120, end: 180 }))).toEqual(
      Buffer.from(bytes(120, 60)),
    );
    expect(ranges.read({ sha256: SHA, begin: 90, end: 120 })).toBeUndefined();
    expect(ranges.read({ sha256: SHA, begin: 180, end: 210 })).toBeUndefined();
    expect(ranges.read({ sha256: 'b'.repeat(64), begin: 100, end: 110 })).toBeUndefined();
    expect(ranges.heldBytes).toBe(100);
  });

  it('calls a range pending while a load will fetch it, absent once that load settles', () => {
    const ranges = new VerifiedRanges();
    const load = ranges.expect([{ sha256: SHA, begin: 0, end: 100 }]);
    ranges.put(SHA, 0, bytes(0, 40));
    expect(ranges.state({ sha256: SHA, begin: 0, end: 40 })).toBe('held');
    expect(ranges.state({ sha256: SHA, begin: 20, end: 100 })).toBe('pending');
    expect(ranges.state({ sha256: SHA, begin: 50, end: 120 })).toBe('absent');
    ranges.settle(load);
    expect(ranges.state({ sha256: SHA, begin: 20, end: 100 })).toBe('absent');
  });

  it('answers a waiter when the bytes it waits for are verified, and gives up on absent ones', async () => {
    const ranges = new VerifiedRanges();
    const load = ranges.expect([{ sha256: SHA, begin: 0, end: 64 }]);
    const waiting = ranges.waitFor(
      { sha256: SHA, begin: 0, end: 64 },
      { maxWaitMs: 5_000, idleGraceMs: 0 },
    );
    const started = Date.now();
    expect(
      await ranges.waitFor(
        { sha256: SHA, begin: 64, end: 65 },
        { maxWaitMs: 5_000, idleGraceMs: 5_000 },
      ),
    ).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
    ranges.put(SHA, 0, bytes(0, 64));
    expect(joined(await waiting)).toEqual(Buffer.from(bytes(0, 64)));
    ranges.settle(load);
  });

  it('drops every blob but the retained ones', () => {
    const ranges = new VerifiedRanges();
    ranges.put(SHA, 0, bytes(0, 10));
    ranges.put('b'.repeat(64), 0, bytes(0, 10));
    ranges.retain(new Set([SHA]));
    expect(ranges.blobs()).toEqual(new Set([SHA]));
  });
});
