// The Dockerfiles under infra/docker, linted offline (dockerfile-utils + flowfleet's image
// rules). No image is built here: there is no Docker engine.
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { describe, expect, test } from 'vitest';
import { lintDockerfile } from './support/dockerfile-lint.js';
import { infraPath, REPO_ROOT } from './support/manifests.js';

const DOCKERFILES = readdirSync(infraPath('docker')).filter((file) => file.endsWith('.Dockerfile'));

describe('infra/docker', () => {
  test('has the coordinator, worker-cpu and worker-cuda images', () => {
    expect(DOCKERFILES.sort()).toEqual([
      'coordinator.Dockerfile',
      'worker-cpu.Dockerfile',
      'worker-cuda.Dockerfile',
    ]);
  });

  test.each(DOCKERFILES)('%s passes the lint', (file) => {
    expect(lintDockerfile(readFileSync(infraPath('docker', file), 'utf8'))).toEqual([]);
  });

  test.each(DOCKERFILES)('%s starts and checks files that exist in the build context', (file) => {
    const dockerfile = DockerfileParser.parse(readFileSync(infraPath('docker', file), 'utf8'));
    const paths = dockerfile
      .getInstructions()
      .filter((i) => ['CMD', 'ENTRYPOINT', 'HEALTHCHECK'].includes(i.getKeyword()))
      .flatMap(
        (i) => (i.getArgumentsContent() ?? '').match(/(?:\/app\/)?(?:apps|infra)\/[\w./-]+/g) ?? [],
      );
    expect(paths.length).toBeGreaterThan(0);
    for (const file of paths) {
      const local = path.join(REPO_ROOT, file.replace(/^\/app\//, ''));
      expect(existsSync(local), file).toBe(true);
      if (local.endsWith('.sh')) accessSync(local, constants.X_OK);
    }
  });

  test('the coordinator image checks GET /healthz, the worker images their heartbeat', () => {
    const health = (file: string) =>
      DockerfileParser.parse(readFileSync(infraPath('docker', file), 'utf8'))
        .getInstructions()
        .find((i) => i.getKeyword() === 'HEALTHCHECK')
        ?.getArgumentsContent();
    expect(health('coordinator.Dockerfile')).toMatch(/'\/healthz'\)/);
    for (const worker of ['worker-cpu.Dockerfile', 'worker-cuda.Dockerfile']) {
      expect(health(worker)).toMatch(/"apps\/worker\/src\/health-main\.ts"\]$/);
    }
  });

  test('worker-cuda installs the CUDA provider the platform probe looks for', () => {
    const text = readFileSync(infraPath('docker', 'worker-cuda.Dockerfile'), 'utf8');
    expect(text).toMatch(
      /ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules\/onnxruntime-node\/script\/install\.js/,
    );
    expect(text).toMatch(/libonnxruntime_providers_cuda\.so/);
    expect(text).toMatch(/^FROM nvidia\/cuda:12\.\d+\.\d+-cudnn-runtime-ubuntu\d\d\.\d\d$/m);
  });

  test('.dockerignore keeps host installs, git, the venv and env files out of the context', () => {
    const ignored = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', '**/node_modules', '.venv', '**/*.env', '.env*'])
      expect(ignored).toContain(entry);
  });
});
