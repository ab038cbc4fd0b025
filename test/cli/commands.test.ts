// The commands that need no fleet, run in-process: verify-numerics on the golden vectors (and on
// broken copies), export-onnx, usage errors (exit 2) and an unreachable coordinator (exit 1, a
// coded error, JSON under --json).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runInProcess } from './cli-harness.js';

const VECTORS = 'packages/numerics/testdata/flowmath.json';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowfleet-cli-commands-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('flowfleet verify-numerics', () => {
  it('passes the golden vectors and prints "N passed, 0 failed" last', async () => {
    const run = await runInProcess(['verify-numerics', VECTORS]);
    expect(run.code).toBe(0);
    const last = run.out.trim().split('\n').at(-1) ?? '';
    expect(last).toMatch(/^\d+ passed, 0 failed$/);
    expect(Number(last.split(' ')[0])).toBeGreaterThan(10);
  });

  it('--json prints the report only', async () => {
    const run = await runInProcess(['verify-numerics', VECTORS, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as { passed: number; failed: number; failures: unknown[] };
    expect(report.failed).toBe(0);
    expect(report.failures).toEqual([]);
    expect(report.passed).toBeGreaterThan(10);
  });

  it('exits 1 when a value is off and 2 for an unusable file', async () => {
    const golden = JSON.parse(await readFile(VECTORS, 'utf8')) as { sigmas?: { out: number[] }[] };
    const sigmas = golden.sigmas?.[0]?.out;
    expect(sigmas).toBeDefined();
    sigmas![1] = sigmas![1]! + 1e-3;
    const broken = join(dir, 'broken.json');
    await writeFile(broken, JSON.stringify(golden));
    const failed = await runInProcess(['verify-numerics', broken]);
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/FAIL sigmas\[0\]/);
    const malformed = join(dir, 'malformed.json');
    await writeFile(malformed, '{"sigmas": 3}');
    expect((await runInProcess(['verify-numerics', malformed])).code).toBe(2);
    expect(
      (await runInProcess(['verify-numerics', join(dir, 'missing.json'), '--json'])).code,
    ).toBe(2);
  });
});

describe('flowfleet export-onnx', () => {
  it('writes the ONNX file and describes it as JSON', async () => {
    const out = join(dir, 'dit.onnx');
    const run = await runInProcess([
      'export-onnx',
      '--model',
      'wan21-mini',
      '--out',
      out,
      '--json',
    ]);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({
      out,
      model: 'wan21-mini',
      component: 'dit',
      form: 'eager',
    });
    expect(existsSync(out)).toBe(true);
  });

  it('bad exporter flags are usage errors (exit 2)', async () => {
    const run = await runInProcess([
      'export-onnx',
      '--model',
      'wan99',
      '--out',
      join(dir, 'x.onnx'),
      '--json',
    ]);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.out)).toMatchObject({ error: { code: 'CLI_USAGE' } });
  });
});

describe('usage and connection errors', () => {
  it('unknown commands, flags and malformed values exit 2', async () => {
    expect((await runInProcess(['frobnicate'])).code).toBe(2);
    expect((await runInProcess(['matrix', '--bogus'])).code).toBe(2);
    const badSeeds = await runInProcess(['rollout', '--seeds', '1,x']);
    expect(badSeeds.code).toBe(2);
    expect(badSeeds.err).toMatch(/seeds/);
    const badEmbeds = await runInProcess(['rollout', '--prompt-embeds', 'not-a-sha']);
    expect(badEmbeds.code).toBe(2);
    expect(badEmbeds.err).toMatch(/sha256/);
    expect((await runInProcess(['--help'])).code).toBe(0);
  });

  it('an unreachable coordinator is CLIENT_UNREACHABLE (exit 1) with a hint, or JSON', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const human = await runInProcess(['workers', '--url', url]);
    expect(human.code).toBe(1);
    expect(human.err).toMatch(/CLIENT_UNREACHABLE/);
    expect(human.err).toMatch(/hint: .*flowfleet up/);
    const json = await runInProcess(['matrix', '--json'], { FLOWFLEET_URL: url });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({ error: { code: 'CLIENT_UNREACHABLE' } });
    expect(json.out.trim().split('\n')).toHaveLength(1);
  });
});
