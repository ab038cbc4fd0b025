import { readFileSync } from 'node:fs';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { float32UlpDistance } from './float32-ulp.js';
import { verifyVectors } from './verify-vectors.js';

type Json = Record<string, Record<string, unknown>[]>;

const goldenText = readFileSync(new URL('../testdata/flowmath.json', import.meta.url), 'utf8');
const golden = (): Json => JSON.parse(goldenText) as Json;

/** `value` moved by `ulps` float32 steps (towards +∞ for ulps > 0). */
function nudgeFloat32(value: number, ulps: number): number {
  const f = new Float32Array([value]);
  const bits = new Int32Array(f.buffer);
  bits[0] = bits[0]! + (value >= 0 ? ulps : -ulps);
  return f[0]!;
}

function malformedPath(json: unknown): string {
  try {
    verifyVectors(json);
  } catch (error) {
    if (isFlowfleetError(error, 'NUM_VECTORS_MALFORMED')) return error.message;
    throw error;
  }
  throw new Error('expected NUM_VECTORS_MALFORMED');
}

describe('verifyVectors', () => {
  it('passes every golden case and summarises each group', () => {
    const report = verifyVectors(golden());
    expect(report.failed).toBe(0);
    expect(report.passed).toBe(47);
    expect(report.cases.every((c) => c.passed)).toBe(true);
    expect(report.groups.map((g) => `${g.group}:${g.passed}/${g.failed}`)).toEqual([
      'philox_kat:3/0',
      'normals:8/0',
      'sigmas:4/0',
      'euler:8/0',
      'cfg:8/0',
      'sde_sample:8/0',
      'sde_recompute:8/0',
    ]);
    expect(report.unknownKeys).toEqual([]);
  });

  it('fails a normal nudged by 2 ulp but accepts one nudged by 1 ulp', () => {
    const twoUlp = golden();
    const out = twoUlp.normals![3]!.out as number[];
    const original = out[5]!;
    out[5] = nudgeFloat32(original, 2);
    expect(float32UlpDistance(out[5], original)).toBe(2);
    const report = verifyVectors(twoUlp);
    expect(report.failed).toBe(1);
    expect(report.cases.filter((c) => !c.passed)).toEqual([
      expect.objectContaining({
        group: 'normals',
        index: 3,
        detail: expect.stringMatching(/^out\[5\]: .*\(2 ulp > 1\)/),
      }),
    ]);

    const oneUlp = golden();
    const same = oneUlp.normals![3]!.out as number[];
    same[5] = nudgeFloat32(same[5]!, 1);
    expect(verifyVectors(oneUlp).failed).toBe(0);
  });

  it('fails perturbed Philox words, sigmas, log-probs, stds and means', () => {
    const json = golden();
    (json.philox_kat![0]!.out as number[])[2]! += 1;
    (json.sigmas![1]!.out as number[])[3]! += 4e-15;
    json.sde_sample![2]!.logProb = (json.sde_sample![2]!.logProb as number) * (1 + 1e-10);
    json.sde_sample![4]!.std = (json.sde_sample![4]!.std as number) * (1 + 1e-10);
    const mean = json.sde_recompute![6]!.mean as number[];
    mean[0] = nudgeFloat32(mean[0]!, -3);
    const report = verifyVectors(json);
    const failed = report.cases.filter((c) => !c.passed).map((c) => `${c.group}[${c.index}]`);
    expect(failed).toEqual([
      'philox_kat[0]',
      'sigmas[1]',
      'sde_sample[2]',
      'sde_sample[4]',
      'sde_recompute[6]',
    ]);
    expect(report.passed + report.failed).toBe(47);
    const logProbCase = report.cases.find((c) => c.group === 'sde_sample' && c.index === 2)!;
    expect(logProbCase.detail).toMatch(/^logProb: got .* \(rel 1\.0e-10 > 1e-12\)/);
  });

  it('fails (does not throw for) a case whose values a function rejects', () => {
    const json = golden();
    json.euler![0]!.sigma = 7;
    const report = verifyVectors(json);
    expect(report.cases.find((c) => c.group === 'euler' && c.index === 0)).toMatchObject({
      passed: false,
      detail: expect.stringContaining('rejected its arguments: sigma'),
    });
  });

  it('ignores unknown top-level keys but reports them', () => {
    const json = { ...golden(), comment: 'made by the trainer', version: 2 };
    const report = verifyVectors(json);
    expect(report.unknownKeys).toEqual(['comment', 'version']);
    expect(report.failed).toBe(0);
  });

  it('checks a file holding only some groups', () => {
    const report = verifyVectors({ cfg: golden().cfg });
    expect(report.passed).toBe(8);
    expect(report.groups.map((g) => g.group)).toEqual(['cfg']);
  });

  it('throws NUM_VECTORS_MALFORMED naming the bad field', () => {
    const withField = (group: string, index: number, field: string, value: unknown) => {
      const json = golden();
      json[group]![index]![field] = value;
      return json;
    };
    const cases: [unknown, RegExp][] = [
      [withField('normals', 3, 'out', 'x'), /^normals\[3\]\.out: expected an array of numbers/],
      [
        withField('normals', 3, 'out', [1, '2']),
        /^normals\[3\]\.out: expected an array of numbers, element 1/,
      ],
      [
        withField('normals', 3, 'out', [1, 2]),
        /^normals\[3\]\.out: expected 12 numbers \(n\), got 2/,
      ],
      [withField('normals', 0, 'seed', -1), /^normals\[0\]\.seed: expected an integer/],
      [withField('normals', 0, 'seed', 2 ** 53), /^normals\[0\]\.seed: expected an integer/],
      [withField('philox_kat', 1, 'key', [1, 2, 3]), /^philox_kat\[1\]\.key: expected 2 numbers/],
      [
        withField('philox_kat', 1, 'ctr', [0, 0, 0, 2 ** 32]),
        /^philox_kat\[1\]\.ctr\[3\]: expected a uint32/,
      ],
      [withField('euler', 2, 'v', [1]), /^euler\[2\]\.v: expected 11 numbers \(the length of x\)/],
      [
        withField('euler', 2, 'sigma', undefined),
        /^euler\[2\]\.sigma: expected a finite number, got nothing/,
      ],
      [withField('cfg', 5, 'scale', '4.5'), /^cfg\[5\]\.scale: expected a finite number/],
      [
        withField('sde_sample', 1, 'step', 99),
        /^sde_sample\[1\]\.step: expected an integer in \[0, 11\]/,
      ],
      [
        withField('sde_recompute', 7, 'prevSample', null),
        /^sde_recompute\[7\]\.prevSample: expected an array/,
      ],
      [
        withField('sigmas', 0, 'out', [1, 0]),
        /^sigmas\[0\]\.out: expected 11 numbers \(steps \+ 1\)/,
      ],
      [{ ...golden(), normals: { seed: 1 } }, /^normals: expected an array of cases/],
      [{ ...golden(), cfg: [null] }, /^cfg\[0\]: expected an object/],
      [[], /^\(root\): expected an object/],
      [null, /^\(root\): expected an object/],
      [{ comment: 'no groups' }, /^\(root\): none of the known groups/],
      [{ normals: [], cfg: [] }, /^\(root\): the file has no cases/],
    ];
    for (const [json, message] of cases) {
      expect(malformedPath(json)).toMatch(message);
    }
  });

  it('puts the field path in the error details', () => {
    const json = golden();
    json.normals![3]!.out = 'x';
    try {
      verifyVectors(json);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: 'NUM_VECTORS_MALFORMED',
        details: { path: 'normals[3].out' },
      });
    }
  });
});
