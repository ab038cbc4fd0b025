import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { moduleWorkerUrl, spawnModuleWorker } from './spawn-module-worker.js';

describe('spawnModuleWorker', () => {
  it('picks the sibling entry with the caller’s extension', () => {
    expect(moduleWorkerUrl('file:///a/src/x.ts', 'w').href).toBe('file:///a/src/w.ts');
    expect(moduleWorkerUrl('file:///a/dist/x.js', 'w').href).toBe('file:///a/dist/w.js');
  });

  it('runs a .ts entry from sources with workspace packages resolved to src/', async () => {
    const worker = spawnModuleWorker(
      moduleWorkerUrl(import.meta.url, '../../test-support/worker-threads/echo-worker.fixture'),
      {
        workerData: { value: 21 },
        name: 'echo',
      },
    );
    try {
      const [message] = (await once(worker, 'message')) as [Record<string, unknown>];
      expect(message['doubled']).toBe(42);
      expect(message['coded']).toBe('INTERNAL_ERROR');
      expect(String(message['errorsResolvedTo'])).toMatch(/packages\/errors\/src\/index\.ts$/);
    } finally {
      await worker.terminate();
    }
  });
});
