import type { WeightVersionRecord } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { planWeightGc, type ComponentVersions, type WeightGcInput } from './weight-gc-plan.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;

function sha(n: number): string {
  return n.toString(16).padStart(64, '0');
}

function record(
  n: number,
  agoMs = 2 * HOUR,
  extra: Partial<WeightVersionRecord> = {},
): WeightVersionRecord {
  return {
    sha256: sha(n),
    sizeBytes: 100,
    shards: [{ sha256: sha(n), sizeBytes: 100 }],
    at: new Date(NOW - agoMs).toISOString(),
    manifest: { sha256: sha(1000 + n), sizeBytes: 10 },
    ...extra,
  };
}

function component(
  latest: number,
  records: [number, WeightVersionRecord | undefined][],
): ComponentVersions {
  return { latest, records: new Map(records) };
}

function input(overrides: Partial<WeightGcInput>): WeightGcInput {
  return {
    components: new Map(),
    held: new Map(),
    pinned: new Map(),
    nowMs: NOW,
    versionsKept: 2,
    graceMs: HOUR,
    ...overrides,
  };
}

function versionsOf(n: number): [number, WeightVersionRecord][] {
  return Array.from({ length: n }, (_, i) => [i + 1, record(i + 1)]);
}

describe('planWeightGc', () => {
  it('drops old superseded versions and keeps the newest ones', () => {
    const plan = planWeightGc(
      input({ components: new Map([['dit', component(5, versionsOf(5))]]) }),
    );
    expect(plan.drop).toEqual([
      { component: 'dit', version: 3 },
      { component: 'dit', version: 2 },
      { component: 'dit', version: 1 },
    ]);
    expect([...plan.kept.get('dit')!]).toEqual([
      [5, 'latest'],
      [4, 'newest'],
    ]);
    expect([...plan.referencedBlobs].sort()).toEqual([sha(4), sha(5), sha(1004), sha(1005)].sort());
  });

  it('never drops a version a live worker holds or a queued job pins', () => {
    const plan = planWeightGc(
      input({
        components: new Map([['dit', component(6, versionsOf(6))]]),
        held: new Map([['dit', new Set([2])]]),
        pinned: new Map([['dit', new Set([3])]]),
      }),
    );
    expect(plan.drop.map((d) => d.version)).toEqual([4, 1]);
    expect(plan.kept.get('dit')?.get(2)).toBe('held');
    expect(plan.kept.get('dit')?.get(3)).toBe('pinned');
  });

  it('keeps versions inside the grace, unreadable records and records without a time', () => {
    const records: [number, WeightVersionRecord | undefined][] = [
      [1, record(1, HOUR / 2)],
      [2, undefined],
      [3, record(3, 2 * HOUR, { at: undefined })],
      [4, record(4)],
      [5, record(5)],
      [6, record(6)],
    ];
    const plan = planWeightGc(input({ components: new Map([['dit', component(6, records)]]) }));
    expect(plan.drop.map((d) => d.version)).toEqual([4]);
    expect(plan.kept.get('dit')?.get(1)).toBe('grace');
    expect(plan.kept.get('dit')?.get(2)).toBe('unreadable');
    expect(plan.kept.get('dit')?.get(3)).toBe('grace');
  });

  it('keeps the base of a kept LoRA version, through a chain of adapters', () => {
    const lora = (n: number, base: number): WeightVersionRecord =>
      record(n, 2 * HOUR, {
        kind: 'lora',
        lora: { base, config: { r: 4, lora_alpha: 4, target_modules: 'q', use_rslora: false } },
      });
    const records: [number, WeightVersionRecord][] = [
      [1, record(1)],
      [2, record(2)],
      [3, lora(3, 1)],
      [4, lora(4, 3)],
      [5, record(5)],
      [6, lora(6, 5)],
    ];
    // 6 and 5 are the newest two; 4 is held; 4 needs 3, which needs 1. 2 goes.
    const plan = planWeightGc(
      input({
        components: new Map([['dit', component(6, records)]]),
        held: new Map([['dit', new Set([4])]]),
      }),
    );
    expect(plan.drop).toEqual([{ component: 'dit', version: 2 }]);
    expect(plan.kept.get('dit')?.get(3)).toBe('base');
    expect(plan.kept.get('dit')?.get(1)).toBe('base');
  });

  it('keeps a blob a dropped version shares with a kept one', () => {
    const shared = { sha256: sha(77), sizeBytes: 50 };
    const records: [number, WeightVersionRecord][] = [
      [1, record(1, 2 * HOUR, { shards: [shared, { sha256: sha(78), sizeBytes: 50 }] })],
      [2, record(2, 2 * HOUR, { shards: [shared, { sha256: sha(79), sizeBytes: 50 }] })],
    ];
    const plan = planWeightGc(
      input({ components: new Map([['dit', component(2, records)]]), versionsKept: 1 }),
    );
    expect(plan.drop).toEqual([{ component: 'dit', version: 1 }]);
    expect(plan.referencedBlobs.has(sha(77))).toBe(true);
    expect(plan.referencedBlobs.has(sha(78))).toBe(false);
  });

  it('treats each component on its own and keeps at least the latest version', () => {
    const plan = planWeightGc(
      input({
        components: new Map([
          ['dit', component(3, versionsOf(3))],
          ['text_encoder', component(1, versionsOf(1))],
        ]),
        versionsKept: 0,
      }),
    );
    expect(plan.drop).toEqual([
      { component: 'dit', version: 2 },
      { component: 'dit', version: 1 },
    ]);
    expect(plan.kept.get('text_encoder')?.get(1)).toBe('latest');
  });
});
