import { describe, expect, it } from 'vitest';
import { moduleWorkerUrl, spawnModuleWorker } from './spawn-module-worker.js';
import { WorkerSlot, type WorkerSlotExit } from './worker-slot.js';

type Request =
  | { readonly op: 'echo'; readonly value: unknown }
  | { readonly op: 'fail'; readonly reason: string }
  | { readonly op: 'exit'; readonly exitCode: number };

class ExitError extends Error {
  constructor(readonly exit: WorkerSlotExit) {
    super(exit.terminated ? 'closed' : `exited ${exit.exitCode}`);
  }
}

function startSlot(onExit: (wasReady: boolean) => void = () => undefined) {
  return new WorkerSlot<Request, string>({
    index: 3,
    worker: spawnModuleWorker(
      moduleWorkerUrl(import.meta.url, '../../test-support/worker-threads/slot-worker.fixture'),
    ),
    failureError: (failure, op) => new Error(`${op}: ${failure}`),
    exitError: (exit) => new ExitError(exit),
    onExit,
    unrefWhenIdle: true,
  });
}

describe('WorkerSlot', () => {
  it('answers each call with the reply carrying its id, and maps failures', async () => {
    const slot = startSlot();
    try {
      await slot.ready();
      const buffer = new Float32Array([1, 2]).buffer;
      const [a, b, failed] = await Promise.allSettled([
        slot.call<number>({ op: 'echo', value: 1 }),
        slot.call<ArrayBuffer>({ op: 'echo', value: buffer }, [buffer]),
        slot.call({ op: 'fail', reason: 'bad input' }),
      ]);
      expect(a).toEqual({ status: 'fulfilled', value: 1 });
      expect(b.status === 'fulfilled' && b.value.byteLength).toBe(8);
      expect(buffer.byteLength).toBe(0); // transferred, not copied
      expect(failed.status === 'rejected' && (failed.reason as Error).message).toBe(
        'fail: bad input',
      );
      expect(slot.inFlight).toBe(0);
    } finally {
      await slot.terminate();
    }
  });

  it('rejects calls in flight with the exit error and reports the exit once', async () => {
    const exits: boolean[] = [];
    const slot = startSlot((wasReady) => exits.push(wasReady));
    await slot.ready();
    const crash = slot.call({ op: 'exit', exitCode: 70 });
    await expect(crash).rejects.toMatchObject({
      exit: { index: 3, terminated: false, exitCode: 70 },
    });
    expect(slot.isDead).toBe(true);
    expect(exits).toEqual([true]);
    await expect(slot.call({ op: 'echo', value: 1 })).rejects.toBeInstanceOf(ExitError);
    await slot.terminate(); // idempotent on a dead worker
  });

  it('rejects with terminated: true after terminate() and does not report an exit', async () => {
    const exits: boolean[] = [];
    const slot = startSlot((wasReady) => exits.push(wasReady));
    await slot.ready();
    await slot.terminate();
    await slot.terminate();
    await expect(slot.call({ op: 'echo', value: 1 })).rejects.toMatchObject({
      exit: { terminated: true },
    });
    expect(exits).toEqual([]);
  });
});
