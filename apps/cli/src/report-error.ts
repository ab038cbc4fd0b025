import { isFlowfleetError } from '@flowfleet/errors';
import { line, type CliIo } from './cli-io.js';
import { EXIT_CODES, exitCodeFor } from './exit-codes.js';

/** A next step for errors whose fix is usually the same. */
function hintFor(code: string, io: Pick<CliIo, 'env'>): string | undefined {
  switch (code) {
    case 'CLIENT_UNREACHABLE':
      return 'is a coordinator running there? Start a local one with `flowfleet up`, or set FLOWFLEET_URL / --url';
    case 'API_UNAUTHORIZED':
      return io.env['FLOWFLEET_TOKEN'] === undefined
        ? 'set FLOWFLEET_TOKEN or pass --token (`flowfleet up` prints the local tokens)'
        : 'the token was not accepted: check FLOWFLEET_TOKEN / --token';
    case 'API_FORBIDDEN':
      return 'this needs the trainer token (viewer tokens only read)';
    case 'API_NO_CAPACITY':
      return 'no live worker can serve this rollout: see `flowfleet matrix`, or pass --wait-for-capacity';
    default:
      return undefined;
  }
}

/**
 * Prints an error a command threw and answers the exit code: a coded error as
 * `flowfleet <command>: CODE: message` (with a hint where there is a usual fix), or with
 * `--json` as `{"error": {code, message, details}}` on stdout; an interruption as 130; anything
 * else is a defect and is printed with its stack.
 */
export function reportError(error: unknown, command: string, json: boolean, io: CliIo): number {
  if (
    io.signal.aborted &&
    (isFlowfleetError(error, 'CLIENT_ABORTED') || (error as Error)?.name === 'AbortError')
  ) {
    if (json)
      line(io.out, JSON.stringify({ error: { code: 'INTERRUPTED', message: 'interrupted' } }));
    else line(io.err, `flowfleet ${command}: interrupted`);
    return EXIT_CODES.interrupted;
  }
  if (isFlowfleetError(error)) {
    if (json) {
      line(
        io.out,
        JSON.stringify({
          error: { code: error.code, message: error.message, details: error.details ?? null },
        }),
      );
    } else {
      line(io.err, `flowfleet ${command}: ${error.code}: ${error.message}`);
      const hint = hintFor(error.code, io);
      if (hint !== undefined) line(io.err, `  hint: ${hint}`);
    }
    return exitCodeFor(error);
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (json)
    line(
      io.out,
      JSON.stringify({
        error: { code: 'INTERNAL_ERROR', message: String((error as Error)?.message ?? error) },
      }),
    );
  line(io.err, `flowfleet ${command}: internal error (a defect, please report it):\n${text}`);
  return EXIT_CODES.failure;
}
