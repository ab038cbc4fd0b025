import { describe, expect, it } from 'vitest';
import { freshPlan, nextVersion, type DesiredState, type VersionEntry } from './desired-state.js';

const RECORD = {
  record: {
    sha256: 'a'.repeat(64),
    sizeBytes: 10,
    shards: [{ sha256: 'a'.repeat(64), sizeBytes: 10 }],
    manifest: { sha256: 'b'.repeat(64), sizeBytes: 5 },
  },
} satisfies VersionEntry;

function state(versions: number[]): DesiredState {
  return {
    latest: Math.max(0, ...versions),
    versions: new Map(versions.map((v) => [v, RECORD])),
  };
}

describe('nextVersion', () => {
  it('is the newest version above the held one, passing over refused ones', () => {
    const s = state([1, 2, 3, 4]);
    expect(nextVersion(s, 1, [], () => false)).toBe(4);
    expect(nextVersion(s, 1, [], (v) => v === 4)).toBe(3);
    expect(nextVersion(s, 4, [], () => false)).toBeUndefined();
    expect(nextVersion(s, 1, [], (v) => v > 1)).toBeUndefined();
  });

  it('is the smallest version a waiting job requires exactly, when it is still ahead', () => {
    const s = state([1, 2, 3, 4]);
    expect(nextVersion(s, 1, [{ exact: 3 }, { exact: 2 }, { min: 4 }], () => false)).toBe(2);
    // Behind what is held, or refused: the newest again.
    expect(nextVersion(s, 3, [{ exact: 2 }], () => false)).toBe(4);
    expect(nextVersion(s, 1, [{ exact: 2 }], (v) => v === 2)).toBe(4);
  });
});

describe('freshPlan', () => {
  it('is the record’s plan for an hour after the sync, then none', () => {
    const plan = { chain: [], chunkBytes: 4096 };
    const at = '2026-12-01T00:00:00.000Z';
    const record = { ...RECORD.record, at, plan };
    expect(freshPlan(record, Date.parse(at) + 59 * 60_000)).toBe(plan);
    expect(freshPlan(record, Date.parse(at) + 61 * 60_000)).toBeUndefined();
    expect(freshPlan({ ...RECORD.record, plan }, Date.parse(at))).toBeUndefined();
  });
});
