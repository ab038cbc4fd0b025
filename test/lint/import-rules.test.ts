import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const eslint = new ESLint({ cwd: ROOT });

/** Lints `code` as if it lived at `file` (relative to the repo root); returns the rule's messages. */
async function importViolations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${file}` });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'flowfleet/allowed-imports')
    .map((m) => m.message);
}

describe('flowfleet/allowed-imports (DESIGN.md §1)', () => {
  it('rejects an import the graph does not allow', async () => {
    const messages = await importViolations(
      'packages/registry/src/x.ts',
      "import { detectPlatform } from '@flowfleet/platform';\nexport const x = detectPlatform;\n",
    );
    expect(messages).toEqual([
      "'packages/registry' may not import '@flowfleet/platform' (allowed: errors, formats; DESIGN.md §1)",
    ]);
  });

  it('accepts an allowed import', async () => {
    expect(
      await importViolations(
        'packages/platform/src/x.ts',
        "import { KERNELS } from '@flowfleet/registry';\nexport const x = KERNELS;\n",
      ),
    ).toEqual([]);
  });

  it('forbids apps importing each other and backends importing models', async () => {
    expect(
      await importViolations(
        'apps/worker/src/x.ts',
        "import { y } from '@flowfleet/coordinator';\nexport const x = y;\n",
      ),
    ).toHaveLength(1);
    expect(
      await importViolations(
        'packages/backends/src/x.ts',
        "import { y } from '@flowfleet/models';\nexport const x = y;\n",
      ),
    ).toHaveLength(1);
  });

  it('lets every workspace import formats, a leaf that imports errors only', async () => {
    const useFormats =
      "import { readRolloutFile } from '@flowfleet/formats';\nexport const x = readRolloutFile;\n";
    for (const workspace of [
      'packages/registry',
      'packages/protocol',
      'packages/client',
      'apps/coordinator',
    ]) {
      expect(await importViolations(`${workspace}/src/x.ts`, useFormats), workspace).toEqual([]);
    }
    expect(
      await importViolations(
        'packages/formats/src/x.ts',
        "import { y } from '@flowfleet/protocol';\nexport const x = y;\n",
      ),
    ).toEqual([
      "'packages/formats' may not import '@flowfleet/protocol' (allowed: errors; DESIGN.md §1)",
    ]);
  });

  it('allows onnxruntime-node only in backends, and only through import()', async () => {
    const staticImport = "import * as ort from 'onnxruntime-node';\nexport const x = ort;\n";
    const lazy = "export const load = () => import('onnxruntime-node');\n";
    const typeOnly =
      "import type { InferenceSession } from 'onnxruntime-node';\nexport type S = InferenceSession;\n";
    expect(await importViolations('packages/runtime/src/x.ts', lazy)).toEqual([
      "only 'packages/backends' may load 'onnxruntime-node'",
    ]);
    expect(await importViolations('packages/backends/src/x.ts', staticImport)).toEqual([
      "'onnxruntime-node' must be loaded lazily with import(), never at module load",
    ]);
    expect(await importViolations('packages/backends/src/x.ts', lazy)).toEqual([]);
    expect(await importViolations('packages/backends/src/x.ts', typeOnly)).toEqual([]);
  });

  it('forbids deep imports, relative escapes and importing from test/ or bench/', async () => {
    expect(
      await importViolations(
        'packages/platform/src/x.ts',
        "import { a } from '@flowfleet/registry/src/registries.js';\nexport const x = a;\n",
      ),
    ).toEqual([
      "deep import '@flowfleet/registry/src/registries.js': use the package's exports map",
    ]);
    expect(
      await importViolations(
        'packages/platform/src/x.ts',
        "import { a } from '../../registry/src/registries.js';\nexport const x = a;\n",
      ),
    ).toHaveLength(1);
    expect(
      await importViolations(
        'packages/platform/src/x.ts',
        "import { a } from '../../../test/harness.js';\nexport const x = a;\n",
      ),
    ).toEqual([
      "'packages/platform' may not import from 'test/' (nothing imports tests or benchmarks)",
    ]);
  });
});
