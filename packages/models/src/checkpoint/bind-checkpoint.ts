import { weightsMismatch, type WrongShapeTensor } from '../weights/check-weights.js';
import type { ModelComponentSpec } from '../cards/model-card.js';
import { CheckpointKeyLookup } from './checkpoint-keys.js';

/** What a checkpoint's header says about one tensor. */
export interface CheckpointEntry {
  readonly dtype: string;
  readonly shape: readonly number[];
}

/** The dtypes a weights checkpoint may hold: workers widen them to float32 exactly. */
export const CHECKPOINT_WEIGHT_DTYPES: readonly string[] = Object.freeze(['F32', 'F16', 'BF16']);

const LOOKUPS = new WeakMap<ModelComponentSpec, CheckpointKeyLookup>();

/** The key lookup of a card component (its names, its vocabularies and prefixes), built once. */
export function checkpointKeyLookup(spec: ModelComponentSpec): CheckpointKeyLookup {
  let lookup = LOOKUPS.get(spec);
  if (lookup === undefined) {
    lookup = CheckpointKeyLookup.create(spec.parameterShapes().keys(), spec.checkpointKeys);
    LOOKUPS.set(spec, lookup);
  }
  return lookup;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Maps a checkpoint's keys onto the component's parameter names through the card's key maps
 * (any vocabulary, any listed prefix) and checks the result: every parameter exactly once, each
 * with its shape and a weights dtype (F32, F16, BF16). Keys under the spec's `ignoredPrefixes`
 * (other modules of the same published file) are skipped.
 * @returns card name → checkpoint key, in the component's parameter order
 * @throws FlowfleetError MODEL_WEIGHTS_MISMATCH listing every missing parameter, every unexpected
 *   key (unknown, or a second key for a parameter already bound) and every wrong shape or dtype
 */
export function bindCheckpoint(
  spec: ModelComponentSpec,
  entries: ReadonlyMap<string, CheckpointEntry>,
): Map<string, string> {
  const shapes = spec.parameterShapes();
  const lookup = checkpointKeyLookup(spec);
  const bound = new Map<string, string>();
  const unexpected: string[] = [];
  const wrongShape: WrongShapeTensor[] = [];
  for (const [key, entry] of entries) {
    const resolved = lookup.resolve(key);
    if (resolved === undefined && lookup.isIgnored(key)) continue;
    if (resolved === undefined || bound.has(resolved.name)) {
      unexpected.push(key);
      continue;
    }
    bound.set(resolved.name, key);
    const expected = shapes.get(resolved.name) ?? [];
    if (!CHECKPOINT_WEIGHT_DTYPES.includes(entry.dtype) || !sameDims(entry.shape, expected)) {
      wrongShape.push({
        name: resolved.name,
        ...(key === resolved.name ? {} : { source: key }),
        expected,
        actual: [...entry.shape],
        dtype: entry.dtype,
      });
    }
  }
  const missing = [...shapes.keys()].filter((name) => !bound.has(name));
  if (missing.length + unexpected.length + wrongShape.length > 0) {
    throw weightsMismatch({ missing, unexpected, wrongShape });
  }
  const ordered = new Map<string, string>();
  for (const name of shapes.keys()) ordered.set(name, bound.get(name)!);
  return ordered;
}
