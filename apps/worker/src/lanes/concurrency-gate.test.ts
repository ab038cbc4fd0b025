import { describe, expect, it } from 'vitest';
import { ConcurrencyGate } from './concurrency-gate.js';

describe('ConcurrencyGate', () => {
  it('hands out at most `limit` slots and remembers the high-water mark', () => {
    const gate = new ConcurrencyGate(2);
    expect([gate.tryAcquire(), gate.tryAcquire(), gate.tryAcquire()]).toEqual([true, true, false]);
    expect(gate.active).toBe(2);
    gate.release();
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.highWater).toBe(2);
    gate.release();
    gate.release();
    expect(() => gate.release()).toThrow(/without a slot/);
  });

  it('wakes a waiter when a slot frees, or when interrupted', async () => {
    const gate = new ConcurrencyGate(1);
    gate.tryAcquire();
    let woke = false;
    const waiting = gate.whenAvailable().then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    gate.release();
    await waiting;
    expect(woke).toBe(true);
    gate.tryAcquire();
    const interrupted = gate.whenAvailable();
    gate.interrupt();
    await interrupted;
    expect(gate.active).toBe(1);
  });

  it('rejects a limit below 1', () => {
    expect(() => new ConcurrencyGate(0)).toThrow(RangeError);
  });
});
