import { isFlowfleetError } from '@flowfleet/errors';
import type { WeightSet } from '@flowfleet/platform';
import { describe, expect, it } from 'vitest';
import { WeightVersions } from './weight-versions.js';

const set = (id: string): WeightSet => ({ id, tensors: new Map() });

function store(): WeightVersions {
  return new WeightVersions([
    { componentId: 'dit', version: 1, weights: set('dit@1') },
    { componentId: 'text_encoder', version: 7, weights: set('te@7') },
  ]);
}

describe('WeightVersions', () => {
  it('releases a superseded version at once when nothing pins it', () => {
    const versions = store();
    expect(versions.stage('dit', 2, set('dit@2'))?.version).toBe(1);
    expect(versions.resident('dit')).toEqual([2]);
    expect(versions.current('dit').weights.id).toBe('dit@2');
  });

  it('keeps a pinned version until its last pin is dropped', () => {
    const versions = store();
    const a = versions.pin();
    const b = versions.pin();
    expect(versions.stage('dit', 2, set('dit@2'))).toBeUndefined();
    expect(versions.resident('dit')).toEqual([2, 1]);
    const c = versions.pin();
    expect(c.map((p) => p.version)).toEqual([2, 7]);
    expect(versions.unpin(a)).toEqual([]);
    expect(versions.pins('dit', 1)).toBe(1);
    expect(versions.unpin(b).map((r) => `${r.componentId}@${r.version}`)).toEqual(['dit@1']);
    expect(versions.resident('dit')).toEqual([2]);
    // The current version is never released by unpinning.
    expect(versions.unpin(c)).toEqual([]);
    expect(versions.resident('text_encoder')).toEqual([7]);
  });

  it('refuses a resident version and an unknown component', () => {
    const versions = store();
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (error) {
        return isFlowfleetError(error) ? error.code : String(error);
      }
      return undefined;
    };
    expect(code(() => versions.stage('dit', 1, set('x')))).toBe('RT_WEIGHTS_VERSION_EXISTS');
    expect(code(() => versions.current('vae'))).toBe('RT_UNKNOWN_COMPONENT');
  });
});
