import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { assertNoEviction, readEvictionPolicy } from './eviction-policy.js';

const infoWith = (policy: string) => ({
  info: async () =>
    `# Memory\r\nused_memory:1000\r\nmaxmemory_policy:${policy}\r\nmem_fragmentation_ratio:1.2\r\n`,
});

describe('eviction policy check', () => {
  it('reads the policy from INFO memory', async () => {
    expect(await readEvictionPolicy(infoWith('volatile-lru'))).toBe('volatile-lru');
    expect(await readEvictionPolicy({ info: async () => '# Memory\r\n' })).toBeUndefined();
  });

  it('accepts noeviction and refuses anything else with the fix in the message', async () => {
    await expect(assertNoEviction(infoWith('noeviction'))).resolves.toBeUndefined();
    const error = await assertNoEviction(infoWith('allkeys-lfu')).catch((e: unknown) => e);
    expect(isFlowfleetError(error, 'COORD_REDIS_EVICTION_POLICY')).toBe(true);
    expect((error as Error).message).toMatch(
      /allkeys-lfu.*CONFIG SET maxmemory-policy noeviction/s,
    );
    const unknown = await assertNoEviction({ info: async () => '' }).catch((e: unknown) => e);
    expect(isFlowfleetError(unknown, 'COORD_REDIS_EVICTION_POLICY')).toBe(true);
  });
});
