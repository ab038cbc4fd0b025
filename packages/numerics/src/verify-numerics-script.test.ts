// Runs scripts/verify-numerics.ts as a child process, exactly as `npm run verify-numerics` does.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GOLDEN = fileURLToPath(new URL('../testdata/flowmath.json', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const dir = mkdtempSync(join(tmpdir(), 'verify-numerics-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runScript(file: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['--conditions=@flowfleet/source', 'scripts/verify-numerics.ts', file],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

describe('scripts/verify-numerics.ts', () => {
  it('exits 0 on the golden file, 1 on a perturbed copy and 2 on a malformed file', async () => {
    const json = JSON.parse(readFileSync(GOLDEN, 'utf8')) as { normals: { out: number[] }[] };
    const f = new Float32Array([json.normals[1]!.out[4]!]);
    new Int32Array(f.buffer)[0]! += 2; // 2 float32 ulps
    json.normals[1]!.out[4] = f[0]!;
    const perturbed = join(dir, 'perturbed.json');
    writeFileSync(perturbed, JSON.stringify(json));
    const malformed = join(dir, 'malformed.json');
    writeFileSync(malformed, JSON.stringify({ normals: [{ seed: 1, stream: 0, n: 2, out: 'x' }] }));

    // In parallel: each child pays tsx start-up, and the runs are independent.
    const [good, bad, broken] = await Promise.all([
      runScript(GOLDEN),
      runScript(perturbed),
      runScript(malformed),
    ]);

    expect(good.code).toBe(0);
    expect(lastLine(good.stdout)).toMatch(/^\d+ passed, 0 failed$/);
    expect(lastLine(good.stdout)).toBe('47 passed, 0 failed');

    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^FAIL normals\[1\]: out\[4\]: .*\(2 ulp > 1\)$/m);
    expect(lastLine(bad.stdout)).toBe('46 passed, 1 failed');

    expect(broken.code).toBe(2);
    expect(broken.stdout).toBe('');
    expect(broken.stderr.trim()).toMatch(
      /^verify-numerics: .*malformed\.json is malformed: normals\[0\]\.out: expected an array of numbers/,
    );
    expect(broken.stderr.trim().split('\n')).toHaveLength(1);
  });
});
