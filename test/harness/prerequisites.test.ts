// `npm test` stops at once with one line when a prerequisite is missing (README's quick start).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeMissing, missingPrerequisites, TEST_PREREQUISITES } from './prerequisites.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/check-test-prerequisites.ts', import.meta.url));

function runCheck(env: NodeJS.ProcessEnv) {
  return spawnSync(
    process.execPath,
    ['--conditions=@flowfleet/source', '--import', 'tsx', SCRIPT],
    {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    },
  );
}

describe('test prerequisites', () => {
  it('names a missing Chromium in one line with how to install it, and exits 1', () => {
    const result = runCheck({ FLOWFLEET_CHROMIUM: '/nonexistent/chromium' });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^npm test needs: chromium for the dashboard tests \(apt-get install/);
  });

  it('names a missing Python venv in one line: npm run setup:python', () => {
    const result = runCheck({ FLOWFLEET_VENV: '/nonexistent/venv' });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^npm test needs: .*\.venv.* \(npm run setup:python\)$/);
  });

  it('names a missing kubectl in one line with how to get one', () => {
    const result = runCheck({ FLOWFLEET_KUBECTL: '/nonexistent/kubectl' });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^npm test needs: .*kubectl \(kustomize v4\+\) for the infra\/k8s rendering tests \(kubectl 1\.21\+/,
    );
  });

  it('names a missing WebGPU adapter in one line with how to install lavapipe', () => {
    const result = runCheck({
      VK_DRIVER_FILES: '/nonexistent.json',
      VK_ICD_FILENAMES: '/nonexistent.json',
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^npm test needs: a WebGPU adapter .*mesa-vulkan-drivers/);
  });

  it('passes silently on this machine, where CI installed everything', () => {
    expect(missingPrerequisites().map((p) => p.name)).toEqual([]);
    const result = runCheck({});
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('lists several missing ones on the same line', () => {
    const line = describeMissing(TEST_PREREQUISITES);
    expect(line.split('\n')).toHaveLength(1);
    for (const p of TEST_PREREQUISITES) expect(line).toContain(p.install);
  });
});
