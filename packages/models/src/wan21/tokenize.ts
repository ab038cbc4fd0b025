import type { Wan21Config } from './wan21-config.js';
import { PAD_TOKEN } from './wan21-config.js';

const encoder = new TextEncoder();

/**
 * Byte-level tokenizer of the toy text encoder: the UTF-8 bytes of each prompt, truncated to
 * `config.textLen` and padded with 256, as int32 [B, L] row-major.
 */
export function tokenize(prompts: readonly string[], config: Wan21Config): Int32Array {
  const len = config.textLen;
  const tokens = new Int32Array(prompts.length * len).fill(PAD_TOKEN);
  prompts.forEach((prompt, b) => {
    const bytes = encoder.encode(prompt);
    const n = Math.min(bytes.length, len);
    for (let i = 0; i < n; i++) tokens[b * len + i] = bytes[i]!;
  });
  return tokens;
}
