import { FlowfleetError } from '@flowfleet/errors';
import { VECTOR_GROUPS } from './vector-format.js';
import type {
  CfgCase,
  EulerCase,
  GoldenVectors,
  NormalsCase,
  PhiloxKatCase,
  SdeRecomputeCase,
  SdeSampleCase,
  SigmasCase,
  VectorGroup,
} from './vector-format.js';

const UINT32_MAX = 0xffffffff;

/** Details of a NUM_VECTORS_MALFORMED error: the path of the offending field. */
export interface MalformedVectorsDetails {
  readonly path: string;
}

/** A validated vectors file plus the top-level keys it had that are not case groups. */
export interface ParsedVectors {
  readonly vectors: GoldenVectors;
  readonly unknownKeys: readonly string[];
  readonly caseCount: number;
}

function malformed(path: string, message: string): FlowfleetError {
  return new FlowfleetError('NUM_VECTORS_MALFORMED', `${path}: ${message}`, {
    details: { path } satisfies MalformedVectorsDetails,
  });
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string ${JSON.stringify(value.slice(0, 20))}`;
  if (typeof value === 'number') return String(value);
  return `a${typeof value === 'object' ? 'n' : ''} ${typeof value}`;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads typed fields of one case object, naming `path.field` in every complaint. */
class FieldReader {
  constructor(
    private readonly record: Readonly<Record<string, unknown>>,
    private readonly path: string,
  ) {}

  number(field: string): number {
    const value = this.record[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw malformed(`${this.path}.${field}`, `expected a finite number, got ${describe(value)}`);
    }
    return value;
  }

  integer(field: string, min: number, max: number): number {
    const value = this.number(field);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw malformed(
        `${this.path}.${field}`,
        `expected an integer in [${min}, ${max}], got ${value}`,
      );
    }
    return value;
  }

  numbers(field: string, length?: { readonly count: number; readonly what: string }): number[] {
    const path = `${this.path}.${field}`;
    const value = this.record[field];
    if (!Array.isArray(value)) {
      throw malformed(path, `expected an array of numbers, got ${describe(value)}`);
    }
    value.forEach((element: unknown, i) => {
      if (typeof element !== 'number' || !Number.isFinite(element)) {
        throw malformed(path, `expected an array of numbers, element ${i} is ${describe(element)}`);
      }
    });
    if (length !== undefined && value.length !== length.count) {
      throw malformed(
        path,
        `expected ${length.count} numbers (${length.what}), got ${value.length}`,
      );
    }
    return value as number[];
  }

  uint32s(field: string, count: number): number[] {
    const words = this.numbers(field, { count, what: `${count} uint32 words` });
    words.forEach((word, i) => {
      if (!Number.isInteger(word) || word < 0 || word > UINT32_MAX) {
        throw malformed(`${this.path}.${field}[${i}]`, `expected a uint32, got ${word}`);
      }
    });
    return words;
  }
}

function sameLength(of: string, length: number): { count: number; what: string } {
  return { count: length, what: `the length of ${of}` };
}

const CASE_READERS: { readonly [G in VectorGroup]: (r: FieldReader) => unknown } = {
  philox_kat: (r): PhiloxKatCase => ({
    ctr: r.uint32s('ctr', 4),
    key: r.uint32s('key', 2),
    out: r.uint32s('out', 4),
  }),
  normals: (r): NormalsCase => {
    const n = r.integer('n', 0, UINT32_MAX);
    return {
      seed: r.integer('seed', 0, Number.MAX_SAFE_INTEGER),
      stream: r.integer('stream', 0, UINT32_MAX),
      n,
      out: r.numbers('out', { count: n, what: 'n' }),
    };
  },
  sigmas: (r): SigmasCase => {
    const steps = r.integer('steps', 1, Number.MAX_SAFE_INTEGER);
    return {
      steps,
      shift: r.number('shift'),
      out: r.numbers('out', { count: steps + 1, what: 'steps + 1' }),
    };
  },
  euler: (r): EulerCase => {
    const x = r.numbers('x');
    return {
      x,
      v: r.numbers('v', sameLength('x', x.length)),
      sigma: r.number('sigma'),
      sigmaNext: r.number('sigmaNext'),
      out: r.numbers('out', sameLength('x', x.length)),
    };
  },
  cfg: (r): CfgCase => {
    const uncond = r.numbers('uncond');
    return {
      uncond,
      cond: r.numbers('cond', sameLength('uncond', uncond.length)),
      scale: r.number('scale'),
      out: r.numbers('out', sameLength('uncond', uncond.length)),
    };
  },
  sde_sample: (r): SdeSampleCase => {
    const x = r.numbers('x');
    const sigmas = r.numbers('sigmas');
    return {
      x,
      v: r.numbers('v', sameLength('x', x.length)),
      sigmas,
      step: r.integer('step', 0, Math.max(0, sigmas.length - 2)),
      noiseLevel: r.number('noiseLevel'),
      seed: r.integer('seed', 0, Number.MAX_SAFE_INTEGER),
      stream: r.integer('stream', 0, UINT32_MAX),
      stdDevT: r.number('stdDevT'),
      sample: r.numbers('sample', sameLength('x', x.length)),
      mean: r.numbers('mean', sameLength('x', x.length)),
      logProb: r.number('logProb'),
      std: r.number('std'),
    };
  },
  sde_recompute: (r): SdeRecomputeCase => {
    const x = r.numbers('x');
    const sigmas = r.numbers('sigmas');
    return {
      x,
      v: r.numbers('v', sameLength('x', x.length)),
      sigmas,
      step: r.integer('step', 0, Math.max(0, sigmas.length - 2)),
      noiseLevel: r.number('noiseLevel'),
      prevSample: r.numbers('prevSample', sameLength('x', x.length)),
      stdDevT: r.number('stdDevT'),
      mean: r.numbers('mean', sameLength('x', x.length)),
      logProb: r.number('logProb'),
    };
  },
};

/**
 * Validates the shape of a parsed golden-vectors file (shared/golden/README.md) by hand: every
 * group is optional but at least one case must be present; unknown top-level keys are returned,
 * not rejected.
 *
 * @throws NUM_VECTORS_MALFORMED naming the bad field's path, e.g.
 *   `normals[3].out: expected an array of numbers, got a string "…"`.
 */
export function parseVectors(json: unknown): ParsedVectors {
  if (!isRecord(json)) {
    throw malformed('(root)', `expected an object of case groups, got ${describe(json)}`);
  }
  const known = new Set<string>(VECTOR_GROUPS);
  const unknownKeys = Object.keys(json).filter((key) => !known.has(key));
  const vectors: Record<string, unknown[]> = {};
  let caseCount = 0;
  for (const group of VECTOR_GROUPS) {
    const cases = json[group];
    if (cases === undefined) continue;
    if (!Array.isArray(cases)) {
      throw malformed(group, `expected an array of cases, got ${describe(cases)}`);
    }
    vectors[group] = cases.map((entry: unknown, index) => {
      const path = `${group}[${index}]`;
      if (!isRecord(entry)) throw malformed(path, `expected an object, got ${describe(entry)}`);
      return CASE_READERS[group](new FieldReader(entry, path));
    });
    caseCount += cases.length;
  }
  if (caseCount === 0) {
    const groups = VECTOR_GROUPS.join(', ');
    throw malformed(
      '(root)',
      Object.keys(vectors).length === 0
        ? `none of the known groups (${groups}) is present`
        : 'the file has no cases (every known group is empty)',
    );
  }
  return { vectors: vectors as GoldenVectors, unknownKeys, caseCount };
}
