// The soak's measurements: resident memory of a process (/proc), the bytes under a directory,
// Redis memory and key count, and per-series statistics with a least-squares slope over the part
// of the run after retention has kicked in.
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { round } from './bench-report.js';

/** One sample of every series at time `t` (seconds since the soak began). */
export interface SoakSample {
  readonly t: number;
  readonly values: Record<string, number>;
}

/** VmRSS of `pid` in bytes, or undefined when it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** The bytes of every file under `dir` (recursively); files vanishing meanwhile count 0. */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  let entries: string[];
  try {
    entries = await readdir(dir, { recursive: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    try {
      const stats = await stat(join(dir, entry));
      if (stats.isFile()) total += stats.size;
    } catch {
      // Removed by retention between readdir and stat.
    }
  }
  return total;
}

/** Redis `used_memory` and the number of keys (the soak's Redis holds nothing else). */
export async function redisFigures(
  redis: Redis,
): Promise<{ usedMemoryBytes: number; keys: number }> {
  const [info, keys] = await Promise.all([redis.info('memory'), redis.dbsize()]);
  const match = /used_memory:(\d+)/.exec(info);
  return { usedMemoryBytes: match === null ? Number.NaN : Number(match[1]), keys };
}

/** Least-squares slope of y over x (per unit of x); NaN with fewer than 2 points. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** One series over the run, and over its steady part (t ≥ `steadyFromS`). */
export interface SeriesFigures {
  readonly first: number;
  readonly atSteadyStart: number;
  readonly last: number;
  readonly max: number;
  readonly steadyMean: number;
  readonly steadyMax: number;
  /** Least-squares slope over the steady part, per minute. */
  readonly slopePerMinute: number;
  /** The slope times the steady part's length over its mean: 0 when flat, ~1 when it doubled. */
  readonly relativeGrowth: number;
}

/** Figures of every series named in the samples. */
export function seriesFigures(
  samples: readonly SoakSample[],
  steadyFromS: number,
): Record<string, SeriesFigures> {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.values)))].sort();
  const figures: Record<string, SeriesFigures> = {};
  for (const name of names) {
    const all = samples.filter((s) => Number.isFinite(s.values[name]));
    const points = all.map((s) => [s.t, s.values[name]!] as const);
    const steady = points.filter(([t]) => t >= steadyFromS);
    if (points.length === 0) continue;
    const ys = steady.map(([, y]) => y);
    const mean = ys.length === 0 ? Number.NaN : ys.reduce((a, b) => a + b, 0) / ys.length;
    const perSecond = slope(steady);
    const span = steady.length < 2 ? 0 : steady.at(-1)![0] - steady[0]![0];
    figures[name] = {
      first: points[0]![1],
      atSteadyStart: steady[0]?.[1] ?? Number.NaN,
      last: points.at(-1)![1],
      max: Math.max(...points.map(([, y]) => y)),
      steadyMean: round(mean, 1),
      steadyMax: ys.length === 0 ? Number.NaN : Math.max(...ys),
      slopePerMinute: round(perSecond * 60, 1),
      relativeGrowth: round(mean > 0 ? (perSecond * span) / mean : Number.NaN, 4),
    };
  }
  return figures;
}

/** A byte count for the table: KiB / MiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  const sign = bytes < 0 ? '-' : '';
  const abs = Math.abs(bytes);
  if (abs >= 1 << 20) return `${sign}${(abs / (1 << 20)).toFixed(1)} MiB`;
  return `${sign}${(abs / 1024).toFixed(1)} KiB`;
}
