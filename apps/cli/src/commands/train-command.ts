import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { FlowfleetError } from '@flowfleet/errors';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { childLogSink } from '../format/child-log-sink.js';
import { formatMs } from '../format/numbers.js';
import { repoRoot } from '../local-fleet/app-launch.js';
import { startLocalFleet, type LocalFleet } from '../local-fleet/local-fleet.js';
import { ServiceProcess, describeExit } from '../local-fleet/service-process.js';
import { redisUrlOf, withFleetOptions, type FleetFlags } from './up-command.js';

/** Options of `flowfleet train` (the rest of its command line goes to the trainer). */
export interface TrainFlags extends FleetFlags {
  readonly python?: string;
}

/** The PyTorch FlowGRPO example, relative to the repository root. */
export const TRAIN_SCRIPT = join('examples', 'flowgrpo', 'train.py');
/** The virtualenv `npm run setup:python` makes, relative to the repository root. */
export const VENV_PYTHON = join('.venv', 'bin', 'python');
/** How long the trainer has to stop after SIGINT (it is killed after that). */
const TRAINER_STOP_MS = 15_000;

/** Adds `flowfleet train` to `program`: the fleet flags, `--python`, and the trainer's flags. */
export function trainCommand(program: Command): Command {
  return withFleetOptions(
    program
      .command('train')
      .description(
        'a local fleet, then the PyTorch FlowGRPO example (examples/flowgrpo/train.py) against it; other flags go to train.py',
      )
      .argument('[trainer-flags...]', 'flags of examples/flowgrpo/train.py (e.g. --iterations 30)')
      .option('--python <path>', `the Python to run it with (default: ${VENV_PYTHON})`)
      .allowUnknownOption()
      .allowExcessArguments(),
    'warn',
  );
}

/** The Python interpreter `train` runs: --python, FLOWFLEET_PYTHON, or the repository's .venv. */
export async function trainerPython(
  flags: Pick<TrainFlags, 'python'>,
  io: Pick<CliIo, 'env'>,
  root: string = repoRoot(),
): Promise<string> {
  const given = flags.python ?? io.env['FLOWFLEET_PYTHON'];
  const python =
    given === undefined || given === ''
      ? join(root, VENV_PYTHON)
      : isAbsolute(given)
        ? given
        : resolve(given);
  try {
    await access(python, constants.X_OK);
  } catch {
    throw new FlowfleetError(
      'CLI_PYTHON_MISSING',
      given === undefined || given === ''
        ? `no Python virtualenv at ${python}: run \`npm run setup:python\` first`
        : `${python} is not an executable Python`,
      { details: { python } },
    );
  }
  return python;
}

/**
 * `flowfleet train` (= `npm run train`): checks the Python, starts a local fleet (Redis, the
 * coordinator, `--workers` workers), runs `python examples/flowgrpo/train.py --url … --token …
 * <trainer flags>` with the trainer's output on stdout/stderr, and stops the fleet (always).
 * @returns 0 when the trainer exited 0
 * @throws FlowfleetError CLI_PYTHON_MISSING (before anything starts), CLI_TRAINER_FAILED,
 *   CLI_CHILD_FAILED, CLI_REDIS_UNAVAILABLE, CLI_START_TIMEOUT
 */
export async function runTrain(
  flags: TrainFlags,
  trainerFlags: readonly string[],
  io: CliIo,
): Promise<number> {
  const root = repoRoot();
  const python = await trainerPython(flags, io, root);
  const write = (text: string): void => line(io.err, text);
  const started = performance.now();
  const redisUrl = redisUrlOf(flags, io);
  const fleet: LocalFleet = await startLocalFleet({
    workers: flags.workers,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    ...(flags.port === undefined ? {} : { port: flags.port }),
    ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
    backend: flags.backend,
    logLevel: flags.logLevel,
    onLog: childLogSink({ level: flags.logLevel, verbose: flags.verbose === true, write }),
    signal: io.signal,
    env: io.env,
  });
  const force = (): void => fleet.kill();
  io.forceSignal.addEventListener('abort', force, { once: true });
  try {
    write(
      `flowfleet train: local fleet up in ${formatMs(performance.now() - started)} (${fleet.url}, ` +
        `${fleet.workers.length} workers); running ${TRAIN_SCRIPT} with ${python}`,
    );
    const trainer = ServiceProcess.spawn({
      name: 'train',
      command: python,
      args: [
        join(root, TRAIN_SCRIPT),
        '--url',
        fleet.url,
        '--token',
        fleet.tokens.trainer,
        ...trainerFlags,
      ],
      cwd: process.cwd(),
      env: { ...io.env, PYTHONUNBUFFERED: '1' },
      onLine: (text, stream) => line(stream === 'stdout' ? io.out : io.err, text),
    });
    const stop = (): void => void trainer.stop(TRAINER_STOP_MS, 'SIGINT');
    io.signal.addEventListener('abort', stop, { once: true });
    const outcome = await Promise.race([trainer.exited, fleet.unexpectedExit]);
    io.signal.removeEventListener('abort', stop);
    if ('service' in outcome) {
      await trainer.stop(TRAINER_STOP_MS, 'SIGINT');
      throw new FlowfleetError(
        'CLI_CHILD_FAILED',
        `${outcome.service} ${describeExit(outcome.exit)} during training; its last output:\n${outcome.output.trimEnd()}`,
        { details: { service: outcome.service } },
      );
    }
    if (io.signal.aborted) return EXIT_CODES.interrupted;
    if (outcome.code !== 0) {
      throw new FlowfleetError('CLI_TRAINER_FAILED', `${TRAIN_SCRIPT} ${describeExit(outcome)}`, {
        details: { exitCode: outcome.code, signal: outcome.signal },
      });
    }
    return EXIT_CODES.ok;
  } finally {
    await fleet.close();
    io.forceSignal.removeEventListener('abort', force);
  }
}
