import { Command, CommanderError } from 'commander';
import type { CliIo } from './cli-io.js';
import { EXIT_CODES } from './exit-codes.js';
import { reportError } from './report-error.js';
import { registerCommands } from './commands/register-commands.js';

/** The CLI's version (the workspace version). */
export const CLI_VERSION = '0.1.0';

/** Commander errors that are not usage errors. */
const CLEAN_EXITS: ReadonlySet<string> = new Set([
  'commander.helpDisplayed',
  'commander.help',
  'commander.version',
  'commander.executeSubCommandAsync',
]);

/**
 * Runs the `flowfleet` command line (`argv` without node and the script) and answers the exit
 * code: 0 ok, 1 failure, 2 usage, 130 interrupted. Every error is printed here, once.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT_CODES.ok;
  let current = { name: 'flowfleet', json: argv.includes('--json') };
  const program = new Command('flowfleet')
    .description('flowfleet: a rollout fleet for flow-matching video diffusion RL (FlowGRPO)')
    .version(CLI_VERSION)
    // Program options only before the command, so `sync --version 3` is the sync's option.
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
    });
  registerCommands(program, io, {
    started: (name, json) => (current = { name, json }),
    finished: (code) => (exitCode = code),
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return CLEAN_EXITS.has(error.code) ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    return reportError(error, current.name, current.json, io);
  }
  return exitCode;
}
