import { FlowfleetClient } from '@flowfleet/client';
import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';

/** The coordinator a remote command talks to when neither --url nor FLOWFLEET_URL is given. */
export const DEFAULT_COORDINATOR_URL = 'http://127.0.0.1:8080';

/** Options every remote command takes. */
export interface RemoteOptions {
  readonly url?: string;
  readonly token?: string;
  readonly json?: boolean;
}

/** Adds `--url`, `--token` and `--json` to a command that talks to a coordinator. */
export function withRemoteOptions(command: Command): Command {
  return command
    .option(
      '--url <url>',
      `coordinator URL (env FLOWFLEET_URL; default ${DEFAULT_COORDINATOR_URL})`,
    )
    .option(
      '--token <token>',
      'bearer token (env FLOWFLEET_TOKEN; trainer role to mutate, viewer to read)',
    )
    .option('--json', 'print machine-readable JSON only');
}

/** Where a remote command goes and with which token: flags win over the environment. */
export function remoteTarget(
  options: RemoteOptions,
  io: Pick<CliIo, 'env'>,
): { readonly url: string; readonly token: string | undefined } {
  const url = options.url ?? io.env['FLOWFLEET_URL'] ?? DEFAULT_COORDINATOR_URL;
  const token = options.token ?? io.env['FLOWFLEET_TOKEN'];
  return { url, token: token === '' ? undefined : token };
}

/**
 * A client for the coordinator named by the flags or the environment.
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS for a malformed URL
 */
export function remoteClient(options: RemoteOptions, io: Pick<CliIo, 'env'>): FlowfleetClient {
  const { url, token } = remoteTarget(options, io);
  return FlowfleetClient.create({ baseUrl: url, ...(token === undefined ? {} : { token }) });
}
