import { FlowfleetError } from '@flowfleet/errors';
import {
  elementDifference,
  firstBitDifference,
  within,
  type FloatArray,
  type ParityTolerance,
} from './parity.js';

/** Where two runs first part ways. */
export interface Divergence {
  readonly step: number;
  readonly tap: string;
  readonly index: number;
  readonly a: number;
  readonly b: number;
  readonly absDiff: number;
  readonly relDiff: number;
}

/** How strictly runs must agree: bit for bit, or within a tolerance. */
export type DivergenceMode = 'bitwise' | ParityTolerance;

/** One tapped array of one run, e.g. the latents after step 3. */
export interface TapRecord {
  readonly step: number;
  readonly tap: string;
  readonly data: FloatArray;
}

function divergentIndex(a: FloatArray, b: FloatArray, mode: DivergenceMode): number {
  if (mode === 'bitwise') return firstBitDifference(a, b);
  const verdict = within(a, b, mode);
  if (verdict.passed) return -1;
  const { rtol = 0, atol = 0 } = mode;
  // Point at the first element that breaks both bounds; the array can fail as a whole without
  // one (its max-abs and max-rel elements differ), and then the worst element is the culprit.
  for (let i = 0; i < a.length; i++) {
    const { abs, rel } = elementDifference(a[i] ?? 0, b[i] ?? 0);
    if (abs > atol && rel > rtol) return i;
  }
  return verdict.index;
}

/**
 * Finds where two runs first diverge over (step, tap): feed it each step's tapped arrays from
 * both runs and it keeps the earliest divergence (lowest step; within a step, the first fed).
 */
export class DivergenceReporter {
  readonly mode: DivergenceMode;
  #first: Divergence | undefined;
  #compared = 0;

  constructor(mode: DivergenceMode = 'bitwise') {
    this.mode = mode;
  }

  /**
   * Compares one (step, tap) pair; returns its divergence, if any.
   * @throws FlowfleetError PLAT_PARITY_SHAPE on a length mismatch
   */
  feed(step: number, tap: string, a: FloatArray, b: FloatArray): Divergence | undefined {
    if (a.length !== b.length) {
      throw new FlowfleetError(
        'PLAT_PARITY_SHAPE',
        `step ${step}, tap '${tap}': lengths differ (${a.length} vs ${b.length})`,
        { details: { step, tap, lengthA: a.length, lengthB: b.length } },
      );
    }
    this.#compared++;
    const index = divergentIndex(a, b, this.mode);
    if (index < 0) return undefined;
    const x = a[index] ?? 0;
    const y = b[index] ?? 0;
    const { abs, rel } = elementDifference(x, y);
    const divergence: Divergence = { step, tap, index, a: x, b: y, absDiff: abs, relDiff: rel };
    if (this.#first === undefined || step < this.#first.step) this.#first = divergence;
    return divergence;
  }

  /** The earliest divergence fed so far, or undefined when the runs agree. */
  get first(): Divergence | undefined {
    return this.#first;
  }

  /** How many (step, tap) pairs were compared. */
  get compared(): number {
    return this.#compared;
  }
}

/**
 * The first (step, tap, index) where two recorded runs diverge, in step order and, within a
 * step, the tap order of run `a`.
 * @throws FlowfleetError PLAT_PARITY_SHAPE when the runs tapped different (step, tap) sets or
 *   an array's length differs
 */
export function firstDivergence(
  runA: readonly TapRecord[],
  runB: readonly TapRecord[],
  mode: DivergenceMode = 'bitwise',
): Divergence | undefined {
  const id = (record: TapRecord): string => `${record.step}\u0000${record.tap}`;
  const byIdB = new Map(runB.map((record) => [id(record), record]));
  const idsA = new Set(runA.map(id));
  const missing = [
    ...runA.filter((record) => !byIdB.has(id(record))).map((r) => `b lacks ${r.step}/${r.tap}`),
    ...runB.filter((record) => !idsA.has(id(record))).map((r) => `a lacks ${r.step}/${r.tap}`),
  ];
  if (missing.length > 0 || runA.length !== runB.length) {
    throw new FlowfleetError(
      'PLAT_PARITY_SHAPE',
      `the runs tapped different (step, tap) sets: ${missing.join(', ') || 'duplicate taps'}`,
      { details: { missing } },
    );
  }
  const ordered = runA
    .map((record, order) => ({ record, order }))
    .sort((x, y) => x.record.step - y.record.step || x.order - y.order);
  const reporter = new DivergenceReporter(mode);
  for (const { record } of ordered) {
    const other = byIdB.get(id(record));
    if (other === undefined) continue;
    const divergence = reporter.feed(record.step, record.tap, record.data, other.data);
    if (divergence !== undefined) return divergence;
  }
  return undefined;
}
