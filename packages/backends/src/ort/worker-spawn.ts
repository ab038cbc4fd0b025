import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { OrtWorkerData } from './worker-protocol.js';

const SOURCE_CONDITION = '@flowfleet/source';
const LOADER_FLAGS = new Set(['--require', '-r', '--import', '--loader', '--experimental-loader']);

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

/**
 * A worker that runs the `.ts` entry from sources. On Node 20 a `--import tsx` in a worker's
 * execArgv registers its hooks too late for the worker's own entry module ("Unknown file
 * extension .ts"), so a tiny CommonJS bootstrap registers tsx in the worker first and then imports
 * the entry; the source export condition makes workspace packages resolve to their `src/` too.
 */
function spawnFromSources(entry: URL, workerData: OrtWorkerData): Worker {
  const bootstrap =
    `import(${JSON.stringify(tsxEsmApiUrl())})` +
    `.then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  const execArgv = withoutTsxLoaders(process.execArgv);
  if (!hasSourceCondition(execArgv)) execArgv.push(`--conditions=${SOURCE_CONDITION}`);
  return new Worker(bootstrap, { eval: true, workerData, execArgv });
}

/**
 * Starts one ONNX Runtime worker thread: `ort-worker.js` from compiled output, or `ort-worker.ts`
 * through tsx when this module itself runs from sources (`import.meta.url` ends in `.ts`: vitest,
 * tsx scripts).
 */
export function spawnOrtWorker(workerData: OrtWorkerData): Worker {
  if (import.meta.url.endsWith('.ts')) {
    return spawnFromSources(new URL('./ort-worker.ts', import.meta.url), workerData);
  }
  return new Worker(new URL('./ort-worker.js', import.meta.url), { workerData });
}
