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
  /**
   * Longest prompt, in Unicode code points (what zod's `max` and JSON Schema's `maxLength` count,
   * and Python's `len`): an emoji is one, whatever its UTF-16 length.
   */
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

/** The name of every limit. */
export const LIMIT_NAMES = Object.freeze(Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]);

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

/** The limits a fleet's coordinators published, as read back from Redis. */
export interface PublishedLimits {
  /** Published values, DEFAULT_LIMITS where a limit was never published or is unreadable. */
  readonly limits: Limits;
  /** False when no coordinator has published yet (the limits are then the defaults). */
  readonly published: boolean;
  /** Fields that held something other than a positive safe integer (their default is used). */
  readonly unreadable: readonly string[];
}

const DECIMAL = /^[1-9][0-9]{0,15}$/;

/**
 * Reads the fleet limits hash (`fleetKeys(prefix).limits`, an HGETALL reply: limit name → decimal
 * integer). Coordinators only ever raise a published value (a job accepted under wider limits must
 * still run after an operator narrows them), so what this returns is the widest limits any
 * coordinator of the fleet has enforced.
 */
export function publishedLimitsOf(fields: Readonly<Record<string, string>>): PublishedLimits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  const unreadable: string[] = [];
  let published = false;
  for (const name of LIMIT_NAMES) {
    const text = fields[name];
    if (text === undefined) continue;
    const value = Number(text);
    if (!DECIMAL.test(text) || !Number.isSafeInteger(value)) {
      unreadable.push(name);
      continue;
    }
    limits[name] = value;
    published = true;
  }
  return { limits: Object.freeze(limits) as unknown as Limits, published, unreadable };
}
