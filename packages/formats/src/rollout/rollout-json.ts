import { compareCodePoints } from '../code-point-order.js';
import { recordSummaryFields } from './rollout-summary.js';
import { everyLatentStep, rolloutTensorLayout, type RolloutRecord } from './rollout-record.js';

/** One tensor in the canonical JSON of a rollout file: values flattened row-major. */
export interface TensorJson {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly values: readonly number[];
}

/** The canonical JSON of a rollout file (spec § Canonical JSON): what a conforming reader yields. */
export interface RolloutFileJson {
  /** The parsed `__metadata__.rollout` object, added fields included. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Every tensor of the file, by its file name. */
  readonly tensors: Readonly<Record<string, TensorJson>>;
  /** The summary fields the file determines (`recordSummaryFields`). */
  readonly summary: Readonly<Record<string, unknown>>;
}

/** The canonical JSON of a read (or about to be written) rollout record. */
export function rolloutFileJson(record: RolloutRecord): RolloutFileJson {
  const tensors: Record<string, TensorJson> = {};
  const latentSteps = record.latentSteps ?? everyLatentStep(record.metadata.steps);
  const counts = { keptLatents: latentSteps.length, frames: record.frameIndices?.length ?? 0 };
  for (const spec of rolloutTensorLayout(record.metadata, counts)) {
    const value = spec.field === 'latentSteps' ? latentSteps : record[spec.field];
    if (value === null || value === undefined) continue;
    tensors[spec.name] = { dtype: spec.dtype, shape: spec.shape, values: Array.from(value) };
  }
  return { metadata: record.metadata, tensors, summary: recordSummaryFields(record) };
}

function numberText(value: number): string {
  // JSON.stringify(-0) is "0"; "-0.0" keeps the sign through JSON parsers of every language.
  return Object.is(value, -0) ? '-0.0' : JSON.stringify(value);
}

/**
 * Pretty JSON for checked-in expectations: keys sorted by code point, two-space indent, arrays of
 * numbers on one line, -0 written as `-0.0`, every number in its shortest round-trip form.
 */
export function prettyJson(value: unknown, indent = ''): string {
  if (typeof value === 'number') return numberText(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'number'))
      return `[${value.map(numberText).join(', ')}]`;
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + prettyJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => compareCodePoints(a, b));
  if (entries.length === 0) return '{}';
  const lines = entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${prettyJson(v, inner)}`);
  return `{\n${lines.join(',\n')}\n${indent}}`;
}
