import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { StaticWorkspace } from './static-workspace.js';

function workspace(workspaceBytes = 32): StaticWorkspace {
  return new StaticWorkspace({
    inputs: {
      x: { dtype: 'float32', dims: [2, 2], data: new Float32Array(4) },
      s: { dtype: 'float64', dims: [2], data: new Float64Array(2) },
    },
    workspaceBytes,
    forwards: new Map(),
    kernels: new Map([['k', 1]]),
  });
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : String(error);
  }
  return undefined;
}

describe('StaticWorkspace', () => {
  it('copies bound inputs into its own buffers', () => {
    const ws = workspace();
    const x = Float32Array.of(1, 2, 3, 4);
    ws.bind({
      x: { dtype: 'float32', dims: [2, 2], data: x },
      s: { dtype: 'float64', dims: [2], data: Float64Array.of(0.5, 0.25) },
    });
    x[0] = 99;
    expect(Array.from(ws.input('x').data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect(Array.from(ws.input('s').data as Float64Array)).toEqual([0.5, 0.25]);
  });

  it('rejects other names, dims or dtype with RT_GRAPH_BIND_MISMATCH', () => {
    const ws = workspace();
    const s = { dtype: 'float64' as const, dims: [2], data: new Float64Array(2) };
    expect(
      codeOf(() => ws.bind({ x: { dtype: 'float32', dims: [4], data: new Float32Array(4) }, s })),
    ).toBe('RT_GRAPH_BIND_MISMATCH');
    expect(
      codeOf(() => ws.bind({ x: { dtype: 'int32', dims: [2, 2], data: new Int32Array(4) }, s })),
    ).toBe('RT_GRAPH_BIND_MISMATCH');
    expect(codeOf(() => ws.bind({ s }))).toBe('RT_GRAPH_BIND_MISMATCH');
    expect(
      codeOf(() =>
        ws.bind({ x: { dtype: 'float32', dims: [2, 2], data: new Float32Array(3) }, s }),
      ),
    ).toBe('RT_GRAPH_BIND_MISMATCH');
  });

  it('carves stable, aligned scratch views and refuses to overflow', () => {
    const ws = workspace(32);
    const a = ws.scratchF32('a', 3);
    const b = ws.scratchF64('b', 2);
    expect(ws.scratchF32('a', 3)).toBe(a);
    expect(b.byteOffset % 8).toBe(0);
    expect(b.byteOffset).toBe(16);
    expect(codeOf(() => ws.scratchF32('c', 1))).toBe('RT_WORKSPACE_OVERFLOW');
    expect(ws.bytesHeld).toBe(32 + 16 + 16);
    expect(ws.kernel<number>('k')).toBe(1);
  });
});
