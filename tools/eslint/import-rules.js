// The allowed-imports graph of DESIGN.md §1 (with ADR 002's two leaf packages), as data.
// Key: a workspace (packages/<name> or apps/<name>); value: the @flowfleet packages it may import.
// `errors`, `numerics` and `formats` are leaves that every package may use; `test/`, `bench/`, `scripts/`
// may import anything, but nothing may import them.
export const ALLOWED_IMPORTS = {
  'packages/errors': [],
  'packages/numerics': ['errors'],
  'packages/formats': ['errors'],
  'packages/registry': ['errors', 'formats'],
  'packages/platform': ['errors', 'registry', 'formats'],
  'packages/backends': ['errors', 'numerics', 'registry', 'platform', 'formats'],
  'packages/models': ['errors', 'numerics', 'registry', 'platform', 'formats'],
  'packages/runtime': ['errors', 'numerics', 'platform', 'models', 'formats'],
  'packages/protocol': ['errors', 'numerics', 'formats'],
  'packages/client': ['errors', 'protocol', 'formats'],
  'packages/redis': ['errors'],
  'apps/worker': [
    'errors',
    'numerics',
    'registry',
    'platform',
    'runtime',
    'backends',
    'models',
    'protocol',
    'client',
    'formats',
    'redis',
  ],
  'apps/coordinator': ['errors', 'protocol', 'models', 'formats', 'redis'],
  'apps/cli': [
    'errors',
    'numerics',
    'client',
    'models',
    'backends',
    'protocol',
    'formats',
    'redis',
  ],
};

/** Third-party modules only one workspace may load. */
export const RESTRICTED_MODULES = {
  'onnxruntime-node': { only: 'packages/backends', lazy: true },
};
