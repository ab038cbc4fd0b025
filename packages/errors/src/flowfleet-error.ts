import { ERROR_CODES, type ErrorCode } from './codes.js';

/** Options of a FlowfleetError besides its code and message. */
export interface FlowfleetErrorOptions<D> {
  /** Structured facts a caller can act on (never secrets). */
  readonly details?: D;
  /** The lower-level error this one explains. */
  readonly cause?: unknown;
}

/** The JSON shape of an error on the wire: the API's error envelope. */
export interface ErrorEnvelope {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: unknown;
}

/**
 * The one base of every expected flowfleet failure: a literal `code` from the table in
 * `ERROR_CODES`, a human message, typed `details`, and an optional `cause`.
 */
export class FlowfleetError<
  C extends ErrorCode = ErrorCode,
  D = Readonly<Record<string, unknown>>,
> extends Error {
  override readonly name = 'FlowfleetError';
  readonly code: C;
  readonly details: D;

  constructor(code: C, message: string, options: FlowfleetErrorOptions<D> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? ({} as D);
  }

  /** HTTP status for this code when it crosses the API edge. */
  get httpStatus(): number {
    return ERROR_CODES[this.code].httpStatus;
  }

  /** The error envelope `{code, message, details}`. */
  toJSON(): ErrorEnvelope {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `error` is a FlowfleetError (optionally: with exactly this code). */
export function isFlowfleetError<C extends ErrorCode>(
  error: unknown,
  code?: C,
): error is FlowfleetError<C> {
  return error instanceof FlowfleetError && (code === undefined || error.code === code);
}
