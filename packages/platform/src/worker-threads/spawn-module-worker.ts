import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

const SOURCE_CONDITION = '@flowfleet/source';
const LOADER_FLAGS = new Set(['--require', '-r', '--import', '--loader', '--experimental-loader']);

/** Options of `spawnModuleWorker`. */
export interface ModuleWorkerOptions {
  /** Passed to the worker as `workerData` (structured-cloned). */
  readonly workerData?: unknown;
  /** Thread name shown in diagnostics. */
  readonly name?: string;
  readonly resourceLimits?: ResourceLimits;
}

/** True for the flags that already select the `@flowfleet/source` export condition. */
function hasSourceCondition(execArgv: readonly string[]): boolean {
  return execArgv.some(
    (arg, i) =>
      arg === `--conditions=${SOURCE_CONDITION}` ||
      arg === `-C=${SOURCE_CONDITION}` ||
      ((arg === '--conditions' || arg === '-C') && execArgv[i + 1] === SOURCE_CONDITION),
  );
}

/** The parent's flags without tsx's own loader flags (the bootstrap registers tsx itself). */
function withoutTsxLoaders(execArgv: readonly string[]): string[] {
  const isTsx = (value: string | undefined) =>
    value !== undefined && /[\\/]tsx[\\/]|^tsx$/.test(value);
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i] as string;
    const [flag, inline] = arg.split('=', 2) as [string, string | undefined];
    if (LOADER_FLAGS.has(flag) && isTsx(inline)) continue;
    if (LOADER_FLAGS.has(arg) && isTsx(execArgv[i + 1])) {
      i += 1;
      continue;
    }
    kept.push(arg);
  }
  return kept;
}

/**
 * The URL of tsx's ESM API (`tsx/esm/api`, import condition), read from tsx's own exports map:
 * `require.resolve` only sees the `require` condition, whose build resolves its hooks wrongly when
 * registered from an eval'd worker.
 */
function tsxEsmApiUrl(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = require(manifestPath) as {
    exports: Record<string, { import?: { default?: string } } | string>;
  };
  const target = manifest.exports['./esm/api'];
  const file = typeof target === 'string' ? target : target?.import?.default;
  if (file === undefined) throw new Error('tsx/package.json has no ./esm/api import export');
  return new URL(file, pathToFileURL(manifestPath)).href;
}

function workerOptions(options: ModuleWorkerOptions): {
  workerData?: unknown;
  name?: string;
  resourceLimits?: ResourceLimits;
} {
  return {
    ...(options.workerData === undefined ? {} : { workerData: options.workerData }),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
  };
}

/**
 * The URL of the module `stem` next to the calling module, with the caller's own extension:
 * `.ts` when the caller runs from sources (vitest, tsx scripts), else `.js` (compiled output).
 * Pass the caller's `import.meta.url`.
 */
export function moduleWorkerUrl(importMetaUrl: string, stem: string): URL {
  const extension = new URL(importMetaUrl).pathname.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${stem}${extension}`, importMetaUrl);
}

/**
 * Starts a worker thread on an ES module. A compiled `.js` entry starts as is. A `.ts` entry
 * (sources under vitest or tsx) needs tsx inside the worker, and on Node 20 a `--import tsx` in a
 * worker's execArgv registers its hooks too late for the worker's own entry module ("Unknown file
 * extension .ts"), so a tiny eval'd bootstrap registers tsx in the worker first and then imports
 * the entry; the `@flowfleet/source` condition makes workspace packages resolve to `src/` too.
 */
export function spawnModuleWorker(entry: URL, options: ModuleWorkerOptions = {}): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, workerOptions(options));
  const bootstrap =
    `import(${JSON.stringify(tsxEsmApiUrl())})` +
    `.then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  const execArgv = withoutTsxLoaders(process.execArgv);
  if (!hasSourceCondition(execArgv)) execArgv.push(`--conditions=${SOURCE_CONDITION}`);
  return new Worker(bootstrap, { ...workerOptions(options), eval: true, execArgv });
}
