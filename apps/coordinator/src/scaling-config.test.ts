import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { parseCoordinatorEnv } from './env.js';
import { boundsFor, configuredClasses, ScalingClassesSchema } from './scaling-config.js';

const BASE = { REDIS_URL: 'redis://127.0.0.1:6380', FLOWFLEET_AUTH: 'off' };

function issuesOf(value: string): { variable: string; message: string }[] {
  try {
    parseCoordinatorEnv({ ...BASE, FLOWFLEET_SCALING_CLASSES: value });
  } catch (error) {
    if (!isFlowfleetError(error, 'COORD_ENV_INVALID')) throw error;
    return error.details['issues'] as { variable: string; message: string }[];
  }
  return [];
}

describe('FLOWFLEET_SCALING_CLASSES', () => {
  it('resolves a class over `*` over the defaults (0..32, jobsPerReplica from the workers)', () => {
    const config = ScalingClassesSchema.parse({
      '*': { maxReplicas: 8 },
      'cuda/sm90': { minReplicas: 1, jobsPerReplica: 4 },
    });
    expect(boundsFor(config, 'cuda/sm90')).toEqual({
      minReplicas: 1,
      maxReplicas: 8,
      jobsPerReplica: 4,
    });
    expect(boundsFor(config, 'cpu/x86-64-v3')).toEqual({ minReplicas: 0, maxReplicas: 8 });
    expect(boundsFor({}, 'cpu/x86-64-v3')).toEqual({ minReplicas: 0, maxReplicas: 32 });
    expect(configuredClasses(config)).toEqual(['cuda/sm90']);
  });

  it('is parsed from the environment as JSON', () => {
    const env = parseCoordinatorEnv({
      ...BASE,
      FLOWFLEET_SCALING_CLASSES: '{"cuda/sm90":{"maxReplicas":4}}',
    });
    expect(env.FLOWFLEET_SCALING_CLASSES).toEqual({ 'cuda/sm90': { maxReplicas: 4 } });
    expect(parseCoordinatorEnv(BASE).FLOWFLEET_SCALING_CLASSES).toBeUndefined();
  });

  it('refuses bad JSON, bad class names, unknown fields and min above max, naming the variable', () => {
    for (const bad of [
      'not json',
      '{"sm90":{}}',
      '{"tpu/v5":{}}',
      '{"cuda/sm90":{"max":3}}',
      '{"cuda/sm90":{"maxReplicas":0}}',
      '{"cuda/sm90":{"minReplicas":-1}}',
      '{"cuda/sm90":{"jobsPerReplica":1.5}}',
      '{"*":{"minReplicas":5},"cuda/sm90":{"maxReplicas":3}}',
      '[]',
    ]) {
      const issues = issuesOf(bad);
      expect(issues.length, bad).toBeGreaterThan(0);
      expect(issues[0]?.variable, bad).toMatch(/^FLOWFLEET_SCALING_CLASSES/);
    }
    expect(issuesOf('{"gpu":{}}')[0]?.message).toMatch(/a key is a device class .* got "gpu"/);
    expect(issuesOf('{"*":{"minReplicas":5},"cuda/sm90":{"maxReplicas":3}}')[0]?.message).toMatch(
      /minReplicas 5 exceeds maxReplicas 3/,
    );
  });
});
