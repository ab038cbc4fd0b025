import { FlowfleetError } from '@flowfleet/errors';

/** The edge limits that keep any one request from exhausting a worker (DESIGN §6). */
export interface Limits {
  /** Most denoise steps a rollout may ask for. */
  readonly maxSteps: number;
  /** Most latent elements a whole group may hold: seeds × frames × height × width (latent units). */
  readonly maxLatentElements: number;
  /** Most seeds (samples) in one rollout group. */
  readonly maxGroupSize: number;
  /** Largest JSON body the API accepts. */
  readonly maxBodyBytes: number;
  /** Largest blob (weights or result) the blob store accepts. */
  readonly maxBlobBytes: number;
  /** Longest prompt, in UTF-16 code units (JS string length). */
  readonly maxPromptChars: number;
}

/**
 * The defaults. `maxLatentElements` is 16 samples × 16 frames × 64 × 64 latent positions: a full
 * group of 16 frames at 64×64, or 64 samples of 4 frames at 64×64.
 */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxSteps: 100,
  maxLatentElements: 16 * 16 * 64 * 64,
  maxGroupSize: 64,
  maxBodyBytes: 1024 * 1024,
  maxBlobBytes: 256 * 1024 * 1024,
  maxPromptChars: 2000,
});

const LIMIT_NAMES = Object.keys(DEFAULT_LIMITS) as readonly (keyof Limits)[];

/**
 * The defaults with `overrides` applied (an app's env.ts maps its variables onto this). Keys whose
 * value is `undefined` keep their default.
 * @throws FlowfleetError PROTO_INVALID_LIMITS when a key is unknown or a value is not a positive
 *   safe integer
 */
export function resolveLimits(
  overrides: { readonly [K in keyof Limits]?: number | undefined } = {},
): Limits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(overrides)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      throw new FlowfleetError('PROTO_INVALID_LIMITS', `unknown limit '${name}'`, {
        details: { name, known: [...LIMIT_NAMES] },
      });
    }
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new FlowfleetError(
        'PROTO_INVALID_LIMITS',
        `limit '${name}' must be a positive integer, got ${String(value)}`,
        { details: { name, value: String(value) } },
      );
    }
    limits[name] = value;
  }
  return Object.freeze(limits) as unknown as Limits;
}
