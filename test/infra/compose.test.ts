// infra/compose.yaml against the compose-spec JSON schema, plus the rules that make
// `docker compose up --scale worker=N` work and drain cleanly. No Docker engine runs here.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { composeProblems } from './support/compose-rules.js';
import { composeSchemaErrors, exampleEnv, loadCompose } from './support/compose-schema.js';
import { infraPath } from './support/manifests.js';

/** infra/example.env with the three tokens filled in, as the README tells the operator. */
const ENV = {
  ...exampleEnv(),
  FLOWFLEET_TRAINER_TOKEN: 'trainer-0123456789abcdef',
  FLOWFLEET_VIEWER_TOKEN: 'viewer-0123456789abcdef',
  FLOWFLEET_WORKER_TOKEN: 'worker-0123456789abcdef',
};
const compose = loadCompose(ENV);

describe('infra/compose.yaml', () => {
  test('validates against the compose-spec schema once interpolated from example.env', () => {
    expect(composeSchemaErrors(compose)).toEqual([]);
  });

  test('refuses to start until the tokens are set (example.env leaves them empty)', () => {
    expect(() => loadCompose(exampleEnv())).toThrow(
      /FLOWFLEET_\w+_TOKEN .*set FLOWFLEET_\w+_TOKEN in infra\/\.env/,
    );
  });

  test('scales workers, drains them, pins images, reads only real variables', () => {
    expect(composeProblems(compose)).toEqual([]);
  });

  test('every build names a Dockerfile and every bind mount a file that exist', () => {
    const services = compose['services'] as Record<
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
