// Shared helpers of the bench/ scripts: timing statistics, a printed table, and the results file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

/** Median, p90 and mean of a list of durations (ms). */
export interface TimingStats {
  readonly n: number;
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly meanMs: number;
  readonly minMs: number;
}

/** Nearest-rank percentile of `values` (0 < p ≤ 100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Statistics of a list of durations in ms. */
export function timingStats(samplesMs: readonly number[]): TimingStats {
  const mean = samplesMs.reduce((a, b) => a + b, 0) / samplesMs.length;
  return {
    n: samplesMs.length,
    medianMs: round(percentile(samplesMs, 50)),
    p90Ms: round(percentile(samplesMs, 90)),
    meanMs: round(mean),
    minMs: round(Math.min(...samplesMs)),
  };
}

/** Rounds to 3 significant decimals for reports. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Times `iterations` awaited calls of `fn` after `warmup` untimed ones; durations in ms. */
export async function timeAsync(
  fn: () => Promise<unknown>,
  { warmup, iterations }: { warmup: number; iterations: number },
): Promise<number[]> {
  for (let i = 0; i < warmup; i += 1) await fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Prints rows as an aligned text table (also valid markdown). */
export function printTable(rows: readonly Record<string, string | number>[]): void {
  if (rows.length === 0) return;
  const headers = Object.keys(rows[0]!);
  const cells = rows.map((row) => headers.map((h) => String(row[h] ?? '')));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: readonly string[]) =>
    `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(headers));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const c of cells) console.log(line(c));
}

/** The machine facts every results file records. */
export function machineFacts(): Record<string, string | number> {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAvg1m: round(loadavg()[0] ?? 0, 2),
  };
}

/** Writes `bench/results/<name>.json` with the top-level `figures` object. */
export function writeResults(
  name: string,
  body: { readonly figures: Record<string, unknown> } & Record<string, unknown>,
): string {
  const dir = new URL('../results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}.json`, dir);
  const payload = {
    benchmark: name,
    at: new Date().toISOString(),
    machine: machineFacts(),
    ...body,
  };
  writeFileSync(file, `${JSON.stringify(payload, null, 2)}\n`);
  return file.pathname;
}
