import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { createKernelRegistry, registerKernel } from './registries.js';
import { TupleRegistry } from './tuple-registry.js';

const noop = () => 0;

describe('TupleRegistry', () => {
  it('throws REG_KEY_ARITY for a key of the wrong arity, on every entry point', () => {
    const reg = new TupleRegistry<() => number>('T', ['a', 'b']);
    const calls = [
      () => reg.register({ key: ['x'], fn: noop, source: 't' }),
      () => reg.get(['x', 'y', 'z']),
      () => reg.isAvailable([]),
      () => reg.resolveFirst([['x', 'y'], ['x']]),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'REG_KEY_ARITY' }));
    }
  });

  it('rejects empty key fields and duplicate registrations', () => {
    const reg = new TupleRegistry<() => number>('T', ['a', 'b']);
    expect(() => reg.register({ key: ['x', ''], fn: noop, source: 't' })).toThrow(
      expect.objectContaining({ code: 'REG_INVALID_KEY' }),
    );
    reg.register({ key: ['x', 'y'], fn: noop, source: 't' });
    try {
      reg.register({ key: ['x', 'y'], fn: noop, source: 't' });
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'REG_DUPLICATE_CELL')).toBe(true);
    }
    const replacement = () => 1;
    reg.register({ key: ['x', 'y'], fn: replacement, source: 't', replace: true });
    expect(reg.get(['x', 'y'])?.fn).toBe(replacement);
  });

  it('treats a throwing predicate as unavailable and says why', () => {
    const reg = new TupleRegistry<() => number>('T', ['a']);
    reg.register({
      key: ['boom'],
      fn: noop,
      source: 't',
      available: () => {
        throw new Error('no driver');
      },
    });
    expect(reg.isAvailable(['boom'])).toBe(false);
    expect(reg.manifest()[0]).toMatchObject({
      available: false,
      reason: 'availability predicate threw: no driver',
    });
  });

  it('resolveFirst returns the first registered and available cell with the rejections', () => {
    const reg = new TupleRegistry<() => number>('T', ['a']);
    const winner = () => 2;
    reg.register({ key: ['off'], fn: noop, source: 't', available: () => false });
    reg.register({ key: ['on'], fn: winner, source: 't' });
    reg.register({ key: ['later'], fn: noop, source: 't' });
    const { cell, rejected } = reg.resolveFirst([['missing'], ['off'], ['on'], ['later']]);
    expect(cell?.fn).toBe(winner);
    expect(rejected).toEqual([
      { key: ['missing'], reason: 'not registered' },
      { key: ['off'], reason: 'availability predicate returned false' },
    ]);
    expect(reg.resolveFirst([['off']]).cell).toBeUndefined();
  });

  it('lists every declared cell in the manifest, unavailable ones too, with meta', () => {
    const reg = createKernelRegistry('K');
    registerKernel(
      {
        op: 'cfg_combine',
        device: 'cpu',
        arch: 'generic',
        fn: noop,
        source: 'cpu',
        workspaceBytes: 64,
      },
      reg,
    );
    registerKernel(
      {
        op: 'cfg_combine',
        device: 'cuda',
        arch: 'sm80',
        variant: 'fused',
        fn: noop,
        source: 'ort-cuda',
        workspaceBytes: 0,
        available: () => false,
      },
      reg,
    );
    expect(reg.manifest()).toEqual([
      {
        registry: 'K',
        key: { op: 'cfg_combine', device: 'cpu', arch: 'generic', variant: 'default' },
        available: true,
        source: 'cpu',
        meta: { workspaceBytes: 64 },
      },
      {
        registry: 'K',
        key: { op: 'cfg_combine', device: 'cuda', arch: 'sm80', variant: 'fused' },
        available: false,
        reason: 'availability predicate returned false',
        source: 'ort-cuda',
        meta: { workspaceBytes: 0 },
      },
    ]);
  });
});
