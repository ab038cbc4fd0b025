import type { SyncStatus } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { judgeRequirement, servedBy, versionStatus, versionsToJudge } from './weight-status.js';

describe('versionStatus', () => {
  it('is loaded while a live worker holds it, retired once none does', () => {
    expect(versionStatus({ a: 'failed', b: 'ok' }, ['b'], ['a', 'b', 'c'], false)).toBe('loaded');
    expect(versionStatus({ a: 'ok' }, [], ['a'], true)).toBe('retired');
    expect(versionStatus({ a: 'ok' }, [], [], false)).toBe('retired');
  });
  it('is failed when nobody loaded it and no live worker is still pending', () => {
    expect(versionStatus({ a: 'refused', b: 'failed' }, [], ['a', 'b'], false)).toBe('failed');
    expect(versionStatus({ a: 'refused' }, [], [], false)).toBe('failed');
  });
  it('is pending while a live worker has not answered, superseded once a newer one exists', () => {
    expect(versionStatus({ a: 'refused' }, [], ['a', 'b'], false)).toBe('pending');
    expect(versionStatus({}, [], ['a'], false)).toBe('pending');
    expect(versionStatus({}, [], ['a'], true)).toBe('superseded');
  });
});

const acks = (entries: [number, Record<string, SyncStatus>][]) => new Map(entries);

describe('servedBy', () => {
  it('is the manifest’s version, or a newer one the worker acked ok since', () => {
    const byVersion = acks([
      [3, { a: 'ok', b: 'refused' }],
      [2, { a: 'ok' }],
    ]);
    expect(servedBy({ workerId: 'a', held: 1 }, byVersion)).toBe(3);
    expect(servedBy({ workerId: 'b', held: 1 }, byVersion)).toBe(1);
    expect(servedBy({ workerId: 'c', held: undefined }, byVersion)).toBeUndefined();
  });
});

describe('judgeRequirement', () => {
  const state = (latest: number, byVersion = acks([])) => ({
    latest,
    recorded: new Set(Array.from({ length: latest }, (_, i) => i + 1)),
    acks: byVersion,
  });
  const two = [
    { workerId: 'a', held: 2 },
    { workerId: 'b', held: 2 },
  ];

  it('counts maxStaleness from the newest version a worker serves, not the newest synced', () => {
    const refused3 = state(3, acks([[3, { a: 'refused', b: 'refused' }]]));
    expect(judgeRequirement({ maxStaleness: 0 }, two, refused3)).toEqual({
      ok: true,
      resolved: { min: 2 },
    });
    expect(judgeRequirement({ maxStaleness: 2 }, two, refused3)).toEqual({ ok: true });
  });

  it('refuses a version refused by every eligible worker, and accepts one still loading', () => {
    const refused3 = state(3, acks([[3, { a: 'refused', b: 'refused' }]]));
    expect(judgeRequirement({ exact: 3 }, two, refused3)).toMatchObject({ ok: false });
    expect(judgeRequirement({ min: 3 }, two, refused3)).toMatchObject({ ok: false });
    const loading = state(3, acks([[3, { a: 'refused' }]]));
    expect(judgeRequirement({ exact: 3 }, two, loading)).toEqual({
      ok: true,
      resolved: { exact: 3 },
    });
  });

  it('refuses an exact version every eligible worker moved past, and one never synced', () => {
    expect(judgeRequirement({ exact: 1 }, two, state(2))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/newer version/),
    });
    expect(judgeRequirement({ exact: 9 }, two, state(2))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/never synced/),
    });
    expect(judgeRequirement({ min: 9 }, two, state(2))).toMatchObject({ ok: false });
  });

  it('holds for capacity (no eligible worker) unless every answer was a refusal', () => {
    const failed = state(2, acks([[2, { gone: 'refused' }]]));
    expect(judgeRequirement({ exact: 2 }, [], failed)).toMatchObject({ ok: false });
    expect(judgeRequirement({ exact: 1 }, [], failed)).toMatchObject({ ok: true });
    expect(judgeRequirement({ maxStaleness: 0 }, [], failed)).toEqual({
      ok: true,
      resolved: { min: 1 },
    });
  });

  it('reads the acks of the versions above what the least-synced eligible worker holds', () => {
    const recorded = new Set([1, 2, 3, 4]);
    expect(versionsToJudge(recorded, [{ workerId: 'a', held: 2 }])).toEqual([4, 3]);
    expect(versionsToJudge(recorded, [{ workerId: 'a', held: 4 }])).toEqual([]);
    expect(versionsToJudge(recorded, [])).toEqual([4, 3, 2, 1]);
  });
});
