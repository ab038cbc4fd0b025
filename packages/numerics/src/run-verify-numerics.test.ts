import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runVerifyNumerics } from './run-verify-numerics.js';
import type { VerifyNumericsIo } from './run-verify-numerics.js';

const goldenText = readFileSync(new URL('../testdata/flowmath.json', import.meta.url), 'utf8');

/** A plain-object host: files from a map, output lines collected. */
function fakeIo(files: Record<string, string>) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io: VerifyNumericsIo = {
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
    stdout: (line) => stdout.push(line),
    stderr: (line) => stderr.push(line),
  };
  return { io, stdout, stderr };
}

function perturbed(): string {
  const json = JSON.parse(goldenText) as { cfg: { out: number[] }[] };
  json.cfg[2]!.out[0]! += 1e-3;
  return JSON.stringify(json);
}

describe('runVerifyNumerics', () => {
  it('prints a summary per group and `N passed, 0 failed` last, exit 0, for the golden file', async () => {
    const { io, stdout, stderr } = fakeIo({ 'g.json': goldenText });
    expect(await runVerifyNumerics(['g.json'], io)).toBe(0);
    expect(stdout).toContain('normals: 8 passed, 0 failed');
    expect(stdout.at(-1)).toBe('47 passed, 0 failed');
    expect(stdout.some((line) => line.startsWith('FAIL'))).toBe(false);
    expect(stderr).toEqual([]);
  });

  it('prints one line per failing case and exits 1', async () => {
    const { io, stdout } = fakeIo({ 'p.json': perturbed() });
    expect(await runVerifyNumerics(['p.json'], io)).toBe(1);
    expect(stdout.filter((line) => line.startsWith('FAIL'))).toEqual([
      expect.stringMatching(/^FAIL cfg\[2\]: out\[0\]: got .* expected .* ulp > 1\)/),
    ]);
    expect(stdout).toContain('cfg: 7 passed, 1 failed');
    expect(stdout.at(-1)).toBe('46 passed, 1 failed');
  });

  it('lists passing cases too with --verbose, and reports unknown keys', async () => {
    const withKey = JSON.stringify({ ...JSON.parse(goldenText), note: 'x' });
    const { io, stdout } = fakeIo({ 'g.json': withKey });
    expect(await runVerifyNumerics(['--verbose', 'g.json'], io)).toBe(0);
    expect(stdout).toContain('ok   philox_kat[0]: out: exact');
    expect(stdout).toContain('ignored unknown top-level keys: note');
    expect(stdout.at(-1)).toBe('47 passed, 0 failed');
  });

  it('exits 2 with one line on stderr for a missing file, bad JSON, a malformed file or bad usage', async () => {
    const files = { 'bad.json': '{"normals": [', 'mal.json': '{"normals": [{"seed": 1}]}' };
    const expectations: [string[], RegExp][] = [
      [['missing.json'], /^verify-numerics: cannot read missing\.json: ENOENT/],
      [['bad.json'], /^verify-numerics: bad\.json is not valid JSON: /],
      [
        ['mal.json'],
        /^verify-numerics: mal\.json is malformed: normals\[0\]\.n: expected a finite/,
      ],
      [[], /^verify-numerics: expected exactly one vectors file/],
      [['a.json', 'b.json'], /^verify-numerics: expected exactly one vectors file/],
      [['--frobnicate'], /^verify-numerics: expected exactly one vectors file/],
    ];
    for (const [argv, message] of expectations) {
      const { io, stdout, stderr } = fakeIo(files);
      expect(await runVerifyNumerics(argv, io)).toBe(2);
      expect(stderr).toHaveLength(1);
      expect(stderr[0]).toMatch(message);
      expect(stdout).toEqual([]);
    }
  });

  it('prints usage and exits 0 for --help', async () => {
    const { io, stdout } = fakeIo({});
    expect(await runVerifyNumerics(['--help'], io)).toBe(0);
    expect(stdout[0]).toMatch(/^usage: verify-numerics/);
  });
});
