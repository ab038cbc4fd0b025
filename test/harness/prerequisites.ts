// What `npm test` needs beyond `npm ci`, checked in one place: the prerequisites script runs it
// before anything else, and the tests that use a prerequisite take its path from here.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requestWebGpuAdapter } from '@flowfleet/platform';

/** One program the test tiers need, and how to get it. */
export interface Prerequisite {
  readonly name: string;
  /** What needs it. */
  readonly neededBy: string;
  /** One short instruction. */
  readonly install: string;
  /** True when it is present on this machine. */
  readonly present: () => boolean;
}

/** Chromium for the dashboard tests: `FLOWFLEET_CHROMIUM` when set, else Debian's path. */
export function chromiumPath(): string {
  return process.env['FLOWFLEET_CHROMIUM'] ?? '/usr/bin/chromium';
}

/** kubectl for rendering infra/k8s (its built-in kustomize): `FLOWFLEET_KUBECTL` when set. */
export function kubectlPath(): string {
  return process.env['FLOWFLEET_KUBECTL'] ?? 'kubectl';
}

/** True when kubectl runs and its built-in kustomize is v4 or newer (components, `labels`). */
function kustomizeReady(): boolean {
  const result = spawnSync(kubectlPath(), ['version', '--client', '-o', 'json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (result.error !== undefined || result.status !== 0) return false;
  const match = /"kustomizeVersion":\s*"v(\d+)\./.exec(result.stdout);
  return match !== null && Number(match[1]) >= 4;
}

/**
 * The interpreter of the repository's virtualenv, which `npm run setup:python` makes and
 * `npm run test:python` runs: `<FLOWFLEET_VENV>/bin/python` when set (the check's test points it
 * elsewhere), else `.venv/bin/python` at the root.
 */
export function venvPython(): string {
  const venv = process.env['FLOWFLEET_VENV'];
  if (venv !== undefined) return `${venv}/bin/python`;
  return fileURLToPath(new URL('../../.venv/bin/python', import.meta.url));
}

/** The Python modules `npm run test:python` runs (the SDK, its test tools, torch for state_dicts). */
const VENV_MODULES = ['flowfleet', 'pytest', 'mypy', 'ruff', 'torch', 'tqdm'];

function venvReady(): boolean {
  const python = venvPython();
  // find_spec only locates each module (importing torch would cost a second).
  const check = `import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ${JSON.stringify(VENV_MODULES)}))`;
  return existsSync(python) && onPath(python, ['-c', check]);
}

function onPath(command: string, args: readonly string[]): boolean {
  const result = spawnSync(command, args, { stdio: 'ignore' });
  return result.error === undefined && result.status === 0;
}

/** Everything the test tiers need, in the order they are reported. */
export const TEST_PREREQUISITES: readonly Prerequisite[] = [
  {
    name: 'redis-server',
    neededBy: 'every integration test',
    install: 'apt-get install redis-server (brew install redis)',
    present: () => onPath('redis-server', ['--version']),
  },
  {
    name: 'chromium',
    neededBy: 'the dashboard tests',
    install: 'apt-get install chromium, or set FLOWFLEET_CHROMIUM=/path/to/chromium',
    present: () => existsSync(chromiumPath()),
  },
  {
    name: 'kubectl (kustomize v4+)',
    neededBy: 'the infra/k8s rendering tests',
    install:
      'kubectl 1.21+ (its built-in kustomize renders infra/k8s offline; Debian 12 kubernetes-client 1.20 is too old), or set FLOWFLEET_KUBECTL',
    present: kustomizeReady,
  },
  {
    name: 'network namespaces (root and iproute2)',
    neededBy: 'the network tests (test/network)',
    install: 'run as root; apt-get install iproute2',
    present: () => process.getuid?.() === 0 && onPath('ip', ['netns', 'list']),
  },
  {
    name: 'nftables',
    neededBy: 'the network tests (packet loss)',
    install: 'apt-get install nftables',
    present: () => onPath('nft', ['--version']),
  },
  {
    name: 'a WebGPU adapter (a Vulkan driver)',
    neededBy: 'the webgpu backend, device parity and mixed-fleet tests',
    install:
      "Debian 12: add the bookworm-backports suite, then apt-get install -t bookworm-backports mesa-vulkan-drivers (lavapipe; Debian 12's own 22.3 lacks a feature Dawn needs)",
    present: () => requestWebGpuAdapter(process.env).adapter !== undefined,
  },
  {
    name: 'the Python venv (.venv)',
    neededBy: 'the Python SDK tests',
    install: 'npm run setup:python',
    present: venvReady,
  },
];

/** The prerequisites that are missing here. */
export function missingPrerequisites(): Prerequisite[] {
  return TEST_PREREQUISITES.filter((prerequisite) => !prerequisite.present());
}

/** One line naming each missing prerequisite with how to install it. */
export function describeMissing(missing: readonly Prerequisite[]): string {
  const parts = missing.map((p) => `${p.name} for ${p.neededBy} (${p.install})`);
  return `npm test needs: ${parts.join('; ')}`;
}
