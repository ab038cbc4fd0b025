// DESIGN.md §1: a model is known only to its family's folder in packages/models. This test reads
// every product source file (packages/*/src, apps/*/src; tests excluded) and lists the lines that
// name the wan21 family outside packages/models/src/wan21/: only the one line that registers the
// family's cards may.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const FAMILY_DIR = 'packages/models/src/wan21/';
const MODEL_NAME = /wan/i;

/** The one line outside the family's folder that may name it: the registry's family line. */
const REGISTRY_LINE = {
  file: 'packages/models/src/cards/shipped-families.ts',
  text: "export { WAN21_CARDS } from '../wan21/wan21-cards.js';",
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(path);
    return entry.isFile() ? [relative(ROOT, path)] : [];
  });
}

/** Every product source file: the `src/` of each package and app, tests left out. */
function productSources(): string[] {
  return ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => {
        const src = join(ROOT, group, entry.name, 'src');
        try {
          return filesUnder(src);
        } catch {
          return [];
        }
      })
      .filter((file) => !file.endsWith('.test.ts')),
  );
}

/** The lines of `files` that match MODEL_NAME, as {file, text}. */
function namingLines(files: readonly string[]): { file: string; text: string }[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .filter((line) => MODEL_NAME.test(line))
      .map((line) => ({ file, text: line.trim() })),
  );
}

describe('model names in product source', () => {
  const sources = productSources();

  it('reads the product source, the family folder included', () => {
    expect(sources.length).toBeGreaterThan(300);
    // The family's own files do name it: the scan sees them, and only they are exempt.
    const family = sources.filter((file) => file.startsWith(FAMILY_DIR));
    expect(namingLines(family).length).toBeGreaterThan(20);
  });

  it('finds the wan21 family named nowhere outside its folder but the registry line', () => {
    const outside = sources.filter((file) => !file.startsWith(FAMILY_DIR));
    expect(namingLines(outside)).toEqual([REGISTRY_LINE]);
  });
});
