/**
 * The fields of PEFT's `adapter_config.json` (LoraConfig) that decide how an adapter merges; the
 * rest of the file is kept by the caller and ignored here.
 */
export interface PeftLoraConfig {
  readonly r: number;
  readonly lora_alpha: number;
  /** Module names (a key matches when it equals one or ends with `.name`), or one regex. */
  readonly target_modules: string | readonly string[];
  readonly use_rslora: boolean;
  /** Per-module rank overrides, keyed by a module-name pattern. */
  readonly rank_pattern?: Readonly<Record<string, number>> | null | undefined;
  /** Per-module alpha overrides, keyed by a module-name pattern. */
  readonly alpha_pattern?: Readonly<Record<string, number>> | null | undefined;
  readonly use_dora?: boolean | null | undefined;
  readonly fan_in_fan_out?: boolean | null | undefined;
  readonly lora_bias?: boolean | null | undefined;
  readonly bias?: string | null | undefined;
}

/**
 * The LoRA scale s of W + s·B·A: alpha / r, or alpha / √r with rsLoRA (PEFT's
 * `scaling = lora_alpha / r` and `lora_alpha / math.sqrt(r)`), in float64.
 */
export function loraScale(alpha: number, rank: number, useRslora: boolean): number {
  return useRslora ? alpha / Math.sqrt(rank) : alpha / rank;
}

/** PEFT's `get_pattern_key`: the first pattern key `k` with `(^|.*\.)k$` matching `module`. */
export function patternValue(
  patterns: Readonly<Record<string, number>> | null | undefined,
  module: string,
): number | undefined {
  for (const [key, value] of Object.entries(patterns ?? {})) {
    if (new RegExp(`(^|.*\\.)${key}$`).test(module)) return value;
  }
  return undefined;
}

/**
 * PEFT's `check_target_module_exists` for a module name: a string is a regex that must match the
 * whole name (`all-linear` matches any linear layer), a list matches a name equal to an entry or
 * ending with `.entry`.
 */
export function isTargetModule(targets: string | readonly string[], module: string): boolean {
  if (typeof targets === 'string') {
    return targets === 'all-linear' || new RegExp(`^(?:${targets})$`).test(module);
  }
  return targets.some((target) => module === target || module.endsWith(`.${target}`));
}
