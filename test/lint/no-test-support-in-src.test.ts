// Product packages ship no test helpers (issue 22): what a package builds into dist/ is its src/
// minus the tests beside the code, so no other file under packages/*/src or apps/*/src may be test
// support — import a test runner or property-testing library, be a worker-thread fixture, or
// reach into a package's test-support/ folder. Test support lives in test/ or in a package's own
// test-support/ folder, outside src/.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const TEST_ONLY_IMPORT = /from '(vitest|fast-check|@vitest\/[^']+)'|from '[^']*test-support\//;

function productSources(): string[] {
  return execFileSync('git', ['ls-files', 'packages/*/src/**', 'apps/*/src/**'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => /\.(ts|js|mjs)$/.test(file) && !/\.test\.ts$/.test(file));
}

/** Why `file` is test support ("" when it is not). */
function testSupportReason(file: string, text: string): string {
  if (/\.fixture\.ts$/.test(file)) return 'a test fixture';
  const match = TEST_ONLY_IMPORT.exec(text);
  return match === null ? '' : `imports ${match[0].slice(5)}`;
}

describe('product source folders', () => {
  it('tells test support from product code (the check itself works)', () => {
    expect(testSupportReason('a/x.ts', "import { it } from 'vitest';")).toBe("imports 'vitest'");
    expect(testSupportReason('a/y.fixture.ts', '')).toBe('a test fixture');
    expect(testSupportReason('a/z.ts', "import { z } from 'zod';")).toBe('');
  });

  it('hold no test support', () => {
    const found = productSources()
      .map((file) => [file, testSupportReason(file, readFileSync(join(ROOT, file), 'utf8'))])
      .filter(([, reason]) => reason !== '')
      .map(([file, reason]) => `${file}: ${reason}`);
    expect(found).toEqual([]);
  });
});
