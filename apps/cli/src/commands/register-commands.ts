import type { Command } from 'commander';
import { integerIn } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { runDemo, type DemoFlags } from '../demo/run-demo.js';
import { cancelCommand, runCancel } from './cancel-command.js';
import { withRemoteOptions, type RemoteOptions } from '../remote-client.js';
import {
  runLanes,
  runMatrix,
  runScaling,
  runWorkers,
  type ScalingFlags,
  type WorkersFlags,
} from './fleet-commands.js';
import { rolloutCommand, runRollout, type RolloutFlags } from './rollout-command.js';
import { runSync, syncCommand, type SyncFlags } from './sync-command.js';
import { runTrain, trainCommand, type TrainFlags } from './train-command.js';
import {
  runExportOnnx,
  runVerifyNumericsCommand,
  type VerifyNumericsFlags,
} from './tool-commands.js';
import { runUp, withFleetOptions, type FleetFlags } from './up-command.js';
import { runWatch, watchCommand, type WatchFlags } from './watch-command.js';

/** How a command reports to runCli: which command runs, and its exit code. */
export interface CommandHooks {
  started(name: string, json: boolean): void;
  finished(code: number): void;
}

/** Registers every flowfleet command on `program`. */
export function registerCommands(program: Command, io: CliIo, hooks: CommandHooks): void {
  // commander calls an action with the positional arguments, then the options, then the command.
  const run =
    <O extends { json?: boolean }, A extends unknown[]>(
      name: string,
      body: (options: O, ...args: A) => Promise<number>,
    ) =>
    async (...args: unknown[]): Promise<void> => {
      const positional = args.slice(0, -2) as A;
      const options = args.at(-2) as O;
      hooks.started(name, options.json === true);
      hooks.finished(await body(options, ...positional));
    };

  withFleetOptions(
    program
      .command('up')
      .description('start a local fleet (Redis, coordinator, N workers) until Ctrl-C'),
    'info',
  ).action(run('up', (flags: FleetFlags) => runUp(flags, io)));

  withFleetOptions(
    program
      .command('demo')
      .description(
        'a local fleet, one FlowGRPO-style round (weights v1, rollouts, v2, rollouts), the matrix, shut down',
      )
      .option('--steps <n>', 'denoise steps per rollout', integerIn(1, 100), 6)
      .option('--group <n>', 'seeds per prompt (group size)', integerIn(2, 16), 4),
    'warn',
  ).action(run('demo', (flags: DemoFlags) => runDemo(flags, io)));

  trainCommand(program).action(
    run('train', (flags: TrainFlags, trainerFlags: string[]) => runTrain(flags, trainerFlags, io)),
  );

  rolloutCommand(program).action(run('rollout', (flags: RolloutFlags) => runRollout(flags, io)));

  cancelCommand(program).action(
    run('cancel', (flags: RemoteOptions, id: string) => runCancel(flags, id, io)),
  );

  withRemoteOptions(
    program
      .command('matrix')
      .description(
        'what the fleet can run where: live workers per op/component × device, and lanes',
      ),
  ).action(run('matrix', (flags: RemoteOptions) => runMatrix(flags, io)));
  withRemoteOptions(
    program
      .command('lanes')
      .description(
        'every recorded lane: its requirements, backlog, queue counts, eligible workers, capacity',
      ),
  ).action(run('lanes', (flags: RemoteOptions) => runLanes(flags, io)));

  withRemoteOptions(
    program
      .command('scaling')
      .description(
        'autoscaling hints per device class: workers, backlog (exclusive, shared), desired replicas',
      )
      .option('--device-class <class>', 'only this class, e.g. cuda/sm90'),
  ).action(run('scaling', (flags: ScalingFlags) => runScaling(flags, io)));

  withRemoteOptions(
    program
      .command('workers')
      .description('every registered worker: state, platform, load, weights, heartbeat')
      .option('--lane <lane>', 'only the live workers that can serve this lane (lane-…)'),
  ).action(run('workers', (flags: WorkersFlags) => runWorkers(flags, io)));

  syncCommand(program).action(
    run('sync', (flags: SyncFlags, component: string, path: string) =>
      runSync(flags, component, path, io),
    ),
  );

  watchCommand(program).action(run('watch', (flags: WatchFlags) => runWatch(flags, io)));

  program
    .command('verify-numerics')
    .description('check @flowfleet/numerics against a vectors file in the golden format')
    .argument('<vectors.json>', 'vectors file (e.g. packages/numerics/testdata/flowmath.json)')
    .option('--verbose', 'print passing cases too')
    .option('--json', 'print machine-readable JSON only')
    .action(
      run('verify-numerics', (flags: VerifyNumericsFlags, file: string) =>
        runVerifyNumericsCommand(flags, file, io),
      ),
    );

  program
    .command('export-onnx')
    .description(
      'export a model component as ONNX (flags: --model --out [--component] [--form] …; --help)',
    )
    .argument('[flags...]', 'the exporter flags')
    .option('--json', 'print machine-readable JSON only')
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(false)
    .action(
      run('export-onnx', (flags: { json?: boolean }, args: string[]) =>
        runExportOnnx(args, flags.json === true, io),
      ),
    );
}
