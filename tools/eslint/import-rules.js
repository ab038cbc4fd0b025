// The allowed-imports graph of DESIGN.md §1 (with ADR 002's two leaf packages), as data.
// Key: a workspace (packages/<name> or apps/<name>); value: the @flowfleet packages it may import.
// `errors` and `numerics` are leaves that every package may use; `test/`, `bench/`, `scripts/`
// may import anything, but nothing may import them.
export const ALLOWED_IMPORTS = {
  'packages/errors': [],
  'packages/numerics': ['errors'],
  'packages/registry': ['errors'],
  'packages/platform': ['errors', 'registry'],
  'packages/backends': ['errors', 'numerics', 'registry', 'platform'],
  'packages/models': ['errors', 'numerics', 'registry', 'platform'],
  'packages/runtime': ['errors', 'numerics', 'platform', 'models'],
  'packages/protocol': ['errors', 'numerics'],
  'packages/client': ['errors', 'protocol'],
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
  ],
  'apps/coordinator': ['errors', 'protocol', 'models'],
  'apps/cli': ['errors', 'numerics', 'client', 'models', 'backends', 'protocol'],
};

/** Third-party modules only one workspace may load. */
export const RESTRICTED_MODULES = {
  'onnxruntime-node': { only: 'packages/backends', lazy: true },
};
