import { isFlowfleetError } from '@flowfleet/errors';
import { verifyVectors } from './verify-vectors.js';
import type { VerifyReport } from './verify-vectors.js';

/** What runVerifyNumerics needs from its host (a narrow context, so tests pass a plain object). */
export interface VerifyNumericsIo {
  /** Reads a file as UTF-8 text. */
  readonly readFile: (path: string) => Promise<string>;
  /** Writes one line to standard output. */
  readonly stdout: (line: string) => void;
  /** Writes one line to standard error. */
  readonly stderr: (line: string) => void;
}

/** Exit codes of `verify-numerics`. */
export const VERIFY_NUMERICS_EXIT = {
  /** Every case passed. */
  passed: 0,
  /** At least one case failed. */
  failed: 1,
  /** Bad usage, unreadable file, invalid JSON or a malformed vectors file. */
  unusable: 2,
} as const;

const USAGE_LINE = 'usage: verify-numerics [--verbose] <vectors.json>';
const USAGE =
  `${USAGE_LINE}\n` +
  '  Checks @flowfleet/numerics against a vectors file in the golden format and prints\n' +
  '  "N passed, M failed" last. Exit 0: all passed; 1: some failed; 2: unusable input.';

const NAME = 'verify-numerics';

/**
 * The `verify-numerics` command: verifies one vectors file and prints one line per failing case,
 * a summary per group, and `N passed, M failed` as the last line. Shared by
 * `npm run verify-numerics` and the `flowfleet verify-numerics` CLI.
 *
 * @param argv the arguments after the command name: `[--verbose] <vectors.json>`.
 * @returns the exit code (VERIFY_NUMERICS_EXIT): 0 all passed, 1 any failed, 2 unusable input.
 */
export async function runVerifyNumerics(
  argv: readonly string[],
  io: VerifyNumericsIo,
): Promise<number> {
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  if (args.includes('--help') || args.includes('-h')) {
    for (const line of USAGE.split('\n')) io.stdout(line);
    return VERIFY_NUMERICS_EXIT.passed;
  }
  const verbose = args.includes('--verbose');
  const rest = args.filter((arg) => arg !== '--verbose');
  const [path] = rest;
  if (path === undefined || rest.length !== 1 || path.startsWith('-')) {
    io.stderr(`${NAME}: expected exactly one vectors file (${USAGE_LINE}; --help for more)`);
    return VERIFY_NUMERICS_EXIT.unusable;
  }

  let text: string;
  try {
    text = await io.readFile(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    io.stderr(`${NAME}: cannot read ${path}: ${reason}`);
    return VERIFY_NUMERICS_EXIT.unusable;
  }

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    io.stderr(`${NAME}: ${path} is not valid JSON: ${reason}`);
    return VERIFY_NUMERICS_EXIT.unusable;
  }

  let report: VerifyReport;
  try {
    report = verifyVectors(json);
  } catch (error) {
    if (!isFlowfleetError(error, 'NUM_VECTORS_MALFORMED')) throw error;
    io.stderr(`${NAME}: ${path} is malformed: ${error.message}`);
    return VERIFY_NUMERICS_EXIT.unusable;
  }

  if (report.unknownKeys.length > 0) {
    io.stdout(`ignored unknown top-level keys: ${report.unknownKeys.join(', ')}`);
  }
  for (const result of report.cases) {
    if (!result.passed) io.stdout(`FAIL ${result.group}[${result.index}]: ${result.detail}`);
    else if (verbose) io.stdout(`ok   ${result.group}[${result.index}]: ${result.detail}`);
  }
  for (const group of report.groups) {
    io.stdout(`${group.group}: ${group.passed} passed, ${group.failed} failed`);
  }
  io.stdout(`${report.passed} passed, ${report.failed} failed`);
  return report.failed === 0 ? VERIFY_NUMERICS_EXIT.passed : VERIFY_NUMERICS_EXIT.failed;
}
