import { FlowfleetError } from '@flowfleet/errors';
import {
  CHECKPOINT_WEIGHT_DTYPES,
  checkpointKeyLookup,
  type CheckpointEntry,
} from '../checkpoint/bind-checkpoint.js';
import type { ModelComponentSpec } from '../cards/model-card.js';
import { isTargetModule, patternValue, type PeftLoraConfig } from './lora-config.js';

/** One adapted layer: W [out, in] of the card gets s·B·A, A = `down` [r, in], B = `up` [out, r]. */
export interface LoraLayer {
  /** The card parameter (a linear layer's `….weight`). */
  readonly target: string;
  /** The adapter's module name, without prefix, in its own vocabulary. */
  readonly module: string;
  /** Adapter keys of A (`lora_A` / `lora_down`) and B (`lora_B` / `lora_up`). */
  readonly down: string;
  readonly up: string;
  /** The adapter key of a per-module `.alpha` scalar (ComfyUI / kohya files), when present. */
  readonly alphaKey?: string;
  readonly rank: number;
  /** The config's alpha for this module (`alpha_pattern`, else `lora_alpha`); `.alpha` wins. */
  readonly alpha: number;
  readonly outFeatures: number;
  readonly inFeatures: number;
}

/** Which layers of a component an adapter adapts. */
export interface LoraBinding {
  /** In the component's parameter order. */
  readonly layers: readonly LoraLayer[];
  readonly boundLayers: number;
}

type Part = 'down' | 'up' | 'alpha';

const SUFFIXES: readonly (readonly [suffix: string, part: Part])[] = [
  ['.lora_A.weight', 'down'],
  ['.lora_B.weight', 'up'],
  ['.lora_down.weight', 'down'],
  ['.lora_up.weight', 'up'],
  ['.alpha', 'alpha'],
];

function splitKey(key: string): { module: string; part: Part } | undefined {
  for (const [suffix, part] of SUFFIXES) {
    if (key.endsWith(suffix) && key.length > suffix.length) {
      return { module: key.slice(0, -suffix.length), part };
    }
  }
  return undefined;
}

function configProblems(config: PeftLoraConfig): string[] {
  const problems: string[] = [];
  if (config.use_dora === true) problems.push('use_dora: DoRA adapters are not merged');
  if (config.fan_in_fan_out === true)
    problems.push('fan_in_fan_out: transposed (Conv1D) layers are not supported');
  if (config.lora_bias === true)
    problems.push('lora_bias: adapters with a B bias are not supported');
  if (config.bias !== undefined && config.bias !== null && config.bias !== 'none')
    problems.push(`bias: ${config.bias} (only "none")`);
  return problems;
}

function dims(entry: CheckpointEntry | undefined): string {
  return entry === undefined ? 'absent' : `${entry.dtype} [${entry.shape.join(', ')}]`;
}

function loraInvalid(component: string, problems: readonly string[]): FlowfleetError {
  return new FlowfleetError(
    'MODEL_LORA_INVALID',
    `${component}: the adapter does not fit (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''})`,
    { details: { component, problems } },
  );
}

/**
 * Binds a LoRA adapter's tensors to a component's layers through the card's key maps. Accepts
 * PEFT keys (`base_model.model.<module>.lora_A.weight` / `lora_B.weight`), diffusers keys
 * (`transformer.<module>.lora_A.weight`) and original / ComfyUI keys
 * (`diffusion_model.<module>.lora_down.weight` / `lora_up.weight` with `<module>.alpha`), the
 * module in any vocabulary of the card. Every module must bind, be in `target_modules`, pair A
 * with B, and have A [rank, in] and B [out, rank] for the layer's W [out, in] with the config's
 * rank (`rank_pattern`, else `r`).
 * @throws FlowfleetError MODEL_LORA_INVALID listing every problem when every module finds its
 *   layer but some do not fit (a rank or shape mismatch, a module outside `target_modules`, a bad
 *   config); MODEL_LORA_UNBOUND when a module binds no layer, no layer binds, or fewer than
 *   `expectLayers` do (details: boundLayers, expectLayers, unbound, problems)
 */
export function bindLoraAdapter(
  spec: ModelComponentSpec,
  entries: ReadonlyMap<string, CheckpointEntry>,
  config: PeftLoraConfig,
  expectLayers?: number,
): LoraBinding {
  const shapes = spec.parameterShapes();
  const lookup = checkpointKeyLookup(spec);
  const problems = configProblems(config);
  const modules = new Map<string, Partial<Record<Part, string>>>();
  for (const key of entries.keys()) {
    const split = splitKey(key);
    if (split === undefined) {
      problems.push(`${key}: not a LoRA tensor (lora_A/lora_B/lora_down/lora_up .weight, .alpha)`);
      continue;
    }
    const parts = modules.get(split.module) ?? {};
    if (parts[split.part] !== undefined)
      problems.push(`${key}: ${split.module} has two ${split.part} tensors`);
    parts[split.part] = key;
    modules.set(split.module, parts);
  }
  const unbound: string[] = [];
  const byTarget = new Map<string, LoraLayer>();
  for (const [module, parts] of modules) {
    const resolved = lookup.resolve(`${module}.weight`);
    if (resolved === undefined) {
      unbound.push(module);
      continue;
    }
    const name = resolved.unprefixed.slice(0, -'.weight'.length);
    if (parts.down === undefined || parts.up === undefined) {
      problems.push(`${module}: needs both A (lora_A/lora_down) and B (lora_B/lora_up)`);
      continue;
    }
    if (byTarget.has(resolved.name)) {
      problems.push(
        `${module}: adapts ${resolved.name}, which ${byTarget.get(resolved.name)!.module} adapts too`,
      );
      continue;
    }
    if (!isTargetModule(config.target_modules, name)) {
      problems.push(`${module}: ${name} is not in target_modules`);
      continue;
    }
    const weight = shapes.get(resolved.name) ?? [];
    const [outFeatures, inFeatures] = weight;
    if (weight.length !== 2 || outFeatures === undefined || inFeatures === undefined) {
      problems.push(`${module}: ${resolved.name} [${weight.join(', ')}] is not a linear layer`);
      continue;
    }
    const rank = patternValue(config.rank_pattern, name) ?? config.r;
    const down = entries.get(parts.down);
    const up = entries.get(parts.up);
    const fits = (entry: CheckpointEntry | undefined, shape: readonly number[]): boolean =>
      entry !== undefined &&
      CHECKPOINT_WEIGHT_DTYPES.includes(entry.dtype) &&
      entry.shape.length === 2 &&
      entry.shape[0] === shape[0] &&
      entry.shape[1] === shape[1];
    if (!fits(down, [rank, inFeatures]) || !fits(up, [outFeatures, rank])) {
      problems.push(
        `${module}: A is ${dims(down)} and B ${dims(up)}; ${resolved.name} [${outFeatures}, ${inFeatures}] at rank ${rank} needs A [${rank}, ${inFeatures}] and B [${outFeatures}, ${rank}] (F32, F16 or BF16)`,
      );
      continue;
    }
    if (parts.alpha !== undefined) {
      const alpha = entries.get(parts.alpha);
      const scalar = alpha !== undefined && alpha.shape.reduce((n, d) => n * d, 1) === 1;
      if (!scalar || !CHECKPOINT_WEIGHT_DTYPES.includes(alpha.dtype)) {
        problems.push(`${parts.alpha}: an alpha is one float value, not ${dims(alpha)}`);
        continue;
      }
    }
    byTarget.set(resolved.name, {
      target: resolved.name,
      module: name,
      down: parts.down,
      up: parts.up,
      ...(parts.alpha === undefined ? {} : { alphaKey: parts.alpha }),
      rank,
      alpha: patternValue(config.alpha_pattern, name) ?? config.lora_alpha,
      outFeatures,
      inFeatures,
    });
  }
  const layers = [...shapes.keys()].flatMap((name) => {
    const layer = byTarget.get(name);
    return layer === undefined ? [] : [layer];
  });
  const boundLayers = layers.length;
  // Every module found its layer but some do not fit (a rank, a shape, the config): that is the
  // adapter being wrong, not unbound, whatever count the misfits leave bound.
  if (unbound.length === 0 && problems.length > 0) throw loraInvalid(spec.id, problems);
  if (
    unbound.length > 0 ||
    boundLayers === 0 ||
    (expectLayers !== undefined && boundLayers < expectLayers)
  ) {
    const why =
      unbound.length > 0
        ? `${unbound.length} adapter module(s) bind no layer (${unbound.slice(0, 3).join(', ')}${unbound.length > 3 ? ', …' : ''})`
        : boundLayers === 0
          ? 'the adapter binds no layer'
          : `the adapter binds ${boundLayers} layers, fewer than the ${expectLayers} expected`;
    throw new FlowfleetError('MODEL_LORA_UNBOUND', `${spec.id}: ${why}`, {
      details: {
        component: spec.id,
        boundLayers,
        expectLayers: expectLayers ?? null,
        unbound,
        problems,
      },
    });
  }
  if (problems.length > 0) throw loraInvalid(spec.id, problems);
  return { layers, boundLayers };
}
