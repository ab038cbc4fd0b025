import type { Command } from 'commander';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { withRemoteOptions, remoteClient, type RemoteOptions } from '../remote-client.js';

/** Adds `cancel <id>` to the program. */
export function cancelCommand(program: Command): Command {
  return withRemoteOptions(
    program
      .command('cancel')
      .description(
        'cancel a queued rollout (it never runs); a running one finishes and is refused (API_JOB_NOT_CANCELLABLE)',
      )
      .argument('<id>', 'the rollout job id (lane-….<uuid>)'),
  );
}

/**
 * `flowfleet cancel <id>`: `DELETE /v1/rollouts/:id` (trainer token). A refusal (running or
 * finished: API_JOB_NOT_CANCELLABLE; unknown: API_JOB_NOT_FOUND) is a coded error, exit 1.
 * @returns 0 once cancelled
 */
export async function runCancel(options: RemoteOptions, id: string, io: CliIo): Promise<number> {
  const cancelled = await remoteClient(options, io).cancelRollout(id, { signal: io.signal });
  if (options.json === true) line(io.out, JSON.stringify(cancelled));
  else line(io.out, `cancelled ${cancelled.id} (lane ${cancelled.lane}): it will not run`);
  return EXIT_CODES.ok;
}
