import { isFlowfleetError } from '@flowfleet/errors';

/** The exit codes of every flowfleet command. */
export const EXIT_CODES = Object.freeze({
  /** Success. */
  ok: 0,
  /** A failure: a coded error, a failed rollout, a failed check. */
  failure: 1,
  /** Bad usage: unknown command or flag, malformed value, unusable input file. */
  usage: 2,
  /** Interrupted (Ctrl-C / SIGTERM) before a command that runs to completion finished. */
  interrupted: 130,
});

/** Error codes that mean "the command line was wrong", not "the operation failed". */
const USAGE_ERROR_CODES: ReadonlySet<string> = new Set([
  'CLI_USAGE',
  'CLIENT_INVALID_OPTIONS',
  'MODEL_ONNX_OPTIONS_INVALID',
  'MODEL_UNKNOWN_CARD',
]);

/** The exit code for an error a command threw. */
export function exitCodeFor(error: unknown): number {
  return isFlowfleetError(error) && USAGE_ERROR_CODES.has(error.code)
    ? EXIT_CODES.usage
    : EXIT_CODES.failure;
}
