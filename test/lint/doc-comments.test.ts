// A TSDoc comment documents the declaration right below it. A doc comment followed by another doc
// comment documents nothing — it was left behind when code moved, and the symbol it describes
// shows the wrong text in editors and generated docs (issue 22: the SDK's main client class had its
// summary on an interface). This test lists every such orphaned block in the TypeScript the
// repository tracks.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

function trackedTypeScript(): string[] {
  return execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file !== '');
}

/** `file:line` of each doc comment whose next line opens another doc comment. */
function orphanedDocComments(file: string, text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  for (let i = 0; i + 1 < lines.length; i += 1) {
    if (lines[i]!.trim().endsWith('*/') && lines[i + 1]!.trim().startsWith('/**')) {
      // Walk back to the orphan's opening line, which is what a reader looks for.
      let start = i;
      while (start > 0 && !lines[start]!.trim().startsWith('/**')) start -= 1;
      found.push(`${file}:${start + 1}`);
    }
  }
  return found;
}

describe('doc comments', () => {
  it('finds an orphaned block (the check itself works)', () => {
    const text = '/** Orphaned. */\n/** The real one. */\nexport const x = 1;\n';
    expect(orphanedDocComments('a.ts', text)).toEqual(['a.ts:1']);
    expect(orphanedDocComments('b.ts', '/** One. */\nexport const y = 2;\n')).toEqual([]);
  });

  it('every doc comment sits on the declaration it documents', () => {
    const orphans = trackedTypeScript().flatMap((file) =>
      orphanedDocComments(file, readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(orphans).toEqual([]);
  });
});
