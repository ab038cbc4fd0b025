import { describe, expect, it } from 'vitest';
import { resolveLimits } from './limits.js';
import { unmetWeights, isWeightRequirementMet } from './weight-requirement.js';
import { SyncAckSchema, WeightSyncSchema, weightSyncSchema } from './weight-sync.js';

const SHA = 'a'.repeat(64);
const SYNC = { component: 'dit', version: 4, sha256: SHA, sizeBytes: 1234 };

function paths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) {
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

describe('WeightSyncSchema', () => {
  it('accepts a sync', () => {
    expect(WeightSyncSchema.parse(SYNC)).toEqual(SYNC);
  });

  it.each([
    ['version 0', { version: 0 }, 'version'],
    ['fractional version', { version: 1.5 }, 'version'],
    ['short sha256', { sha256: 'abc' }, 'sha256'],
    ['uppercase sha256', { sha256: 'A'.repeat(64) }, 'sha256'],
    ['zero size', { sizeBytes: 0 }, 'sizeBytes'],
    ['bad component', { component: 'DiT' }, 'component'],
    ['unknown key', { url: 'http://x' }, ''],
  ])('rejects a %s', (_name, patch, path) => {
    expect(paths(WeightSyncSchema.safeParse({ ...SYNC, ...patch }))).toContain(path);
  });

  it('bounds sizeBytes by maxBlobBytes', () => {
    const schema = weightSyncSchema(resolveLimits({ maxBlobBytes: 1000 }));
    expect(paths(schema.safeParse(SYNC))).toEqual(['sizeBytes']);
    expect(schema.safeParse({ ...SYNC, sizeBytes: 1000 }).success).toBe(true);
  });
});

describe('SyncAckSchema', () => {
  const ACK = {
    workerId: 'w-1',
    component: 'dit',
    version: 4,
    status: 'ok',
    at: '2026-11-30T05:35:00Z',
  };

  it('accepts an ok ack without a reason and a refusal with one', () => {
    expect(SyncAckSchema.parse(ACK)).toEqual(ACK);
    const refused = { ...ACK, status: 'refused', reason: 'sha256 mismatch' };
    expect(SyncAckSchema.parse(refused)).toEqual(refused);
  });

  it('rejects a failed or refused ack without a reason', () => {
    expect(paths(SyncAckSchema.safeParse({ ...ACK, status: 'failed' }))).toEqual(['reason']);
    expect(paths(SyncAckSchema.safeParse({ ...ACK, status: 'refused' }))).toEqual(['reason']);
  });

  it('rejects an unknown status and a bad timestamp', () => {
    expect(paths(SyncAckSchema.safeParse({ ...ACK, status: 'maybe' }))).toEqual(['status']);
    expect(paths(SyncAckSchema.safeParse({ ...ACK, at: 'yesterday' }))).toEqual(['at']);
  });
});

describe('weight requirements', () => {
  it('checks min and exact', () => {
    expect(isWeightRequirementMet(3, { min: 3 })).toBe(true);
    expect(isWeightRequirementMet(2, { min: 3 })).toBe(false);
    expect(isWeightRequirementMet(4, { exact: 3 })).toBe(false);
    expect(isWeightRequirementMet(undefined, { min: 1 })).toBe(false);
  });

  it('lists the components a worker must sync first', () => {
    expect(
      unmetWeights(
        { dit: 2, text_encoder: 5 },
        {
          text_encoder: { exact: 5 },
          dit: { min: 3 },
          vae: { min: 1 },
        },
      ),
    ).toEqual([
      { component: 'dit', held: 2, required: { min: 3 } },
      { component: 'vae', held: null, required: { min: 1 } },
    ]);
    expect(unmetWeights({ dit: 9 }, { dit: { min: 3 } })).toEqual([]);
  });
});
