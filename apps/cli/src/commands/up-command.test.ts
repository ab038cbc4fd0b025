import { describe, expect, it } from 'vitest';
import { fleetCredentials } from './up-command.js';

describe('flowfleet up banner', () => {
  const fleet = {
    url: 'http://127.0.0.1:41234',
    tokens: { trainer: 'trainer-t', viewer: 'viewer-v', worker: 'worker-w' },
    redis: { kind: 'redis-server' as const, url: 'redis://127.0.0.1:40000' },
    prefix: 'ff',
  };

  it('prints every role token and the environment that joins another worker', () => {
    const text = fleetCredentials(fleet).join('\n');
    expect(text).toContain('FLOWFLEET_TOKEN=trainer-t');
    expect(text).toContain('viewer token viewer-v');
    expect(text).toContain('worker token worker-w');
    const join = fleetCredentials(fleet).find((l) => l.includes('npm run worker')) ?? '';
    for (const part of [
      'REDIS_URL=redis://127.0.0.1:40000',
      'FLOWFLEET_PREFIX=ff',
      'FLOWFLEET_COORDINATOR_URL=http://127.0.0.1:41234',
      'FLOWFLEET_WORKER_TOKEN=worker-w',
    ])
      expect(join).toContain(part);
  });
});
