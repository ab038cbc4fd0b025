// infra/compose.yaml against the compose-spec JSON schema, plus the rules that make
// `docker compose up --scale worker=N` work and drain cleanly. No Docker engine runs here.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { composeProblems } from './support/compose-rules.js';
import { composeSchemaErrors } from './support/compose-schema.js';
import { infraPath, readInfraYaml } from './support/manifests.js';

const [compose] = readInfraYaml('compose.yaml');

describe('infra/compose.yaml', () => {
  test('validates against the compose-spec schema', () => {
    expect(compose).toBeDefined();
    expect(composeSchemaErrors(compose!)).toEqual([]);
  });

  test('scales workers, drains them, pins images, reads only real variables', () => {
    expect(composeProblems(compose!)).toEqual([]);
  });

  test('every build names a Dockerfile and every bind mount a file that exist', () => {
    const services = compose!['services'] as Record<
      string,
      { build?: { context: string; dockerfile: string }; volumes?: string[] }
    >;
    for (const service of Object.values(services)) {
      if (service.build !== undefined) {
        const context = path.resolve(infraPath(), service.build.context);
        expect(existsSync(path.join(context, service.build.dockerfile))).toBe(true);
      }
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.'))
          expect(existsSync(path.resolve(infraPath(), source))).toBe(true);
      }
    }
  });
});
