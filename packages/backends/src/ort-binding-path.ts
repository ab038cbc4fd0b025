import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Where onnxruntime-node's native binding lives on this host (whether or not it exists), found
 * from the package's package.json without loading the module; undefined when the package cannot
 * be resolved.
 */
export function ortBindingPath(): string | undefined {
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve('onnxruntime-node/package.json');
  } catch {
    // Not installed: the fact is "no binding", which the caller reports as unavailability.
    return undefined;
  }
  const parsed = JSON.parse(readFileSync(packageJson, 'utf8')) as {
    binary?: { napi_versions?: unknown };
  };
  const versions = parsed.binary?.napi_versions;
  const napi: unknown = Array.isArray(versions) ? versions[0] : undefined;
  // The same path onnxruntime-node's dist/binding.js requires.
  return path.join(
    path.dirname(packageJson),
    'bin',
    `napi-v${typeof napi === 'number' ? napi : 6}`,
    process.platform,
    process.arch,
    'onnxruntime_binding.node',
  );
}
