import { setTimeout as sleep } from 'node:timers/promises';
import { isFlowfleetError } from '@flowfleet/errors';
import type { Command } from 'commander';
import { integerIn } from '../cli-args.js';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { lanesTable, workersTable } from '../format/fleet-tables.js';
import {
  remoteClient,
  remoteTarget,
  withRemoteOptions,
  type RemoteOptions,
} from '../remote-client.js';

/** Options of `flowfleet watch`. */
export interface WatchFlags extends RemoteOptions {
  readonly interval: number;
  readonly count?: number;
}

/** Adds `watch` to the program. */
export function watchCommand(program: Command): Command {
  return withRemoteOptions(
    program
      .command('watch')
      .description('a live table of workers and lanes (redrawn on a terminal; Ctrl-C exits)')
      .option('-i, --interval <ms>', 'refresh interval', integerIn(100, 3_600_000), 2_000)
      .option('-n, --count <n>', 'stop after this many refreshes', integerIn(1, 1_000_000)),
  );
}

/** Errors that refreshing again will not fix. */
const FATAL_CODES: ReadonlySet<string> = new Set([
  'API_UNAUTHORIZED',
  'API_FORBIDDEN',
  'CLIENT_INVALID_OPTIONS',
]);

/**
 * `flowfleet watch`: refreshes workers and lanes every `--interval` ms until Ctrl-C (or
 * `--count` refreshes). On a terminal the screen is redrawn; otherwise each refresh is printed
 * as a block under a timestamp; `--json` prints one JSON object per refresh (NDJSON). A
 * coordinator that is briefly unreachable shows as a line and the watch goes on.
 * @returns 0 when stopped by Ctrl-C or `--count`
 */
export async function runWatch(flags: WatchFlags, io: CliIo): Promise<number> {
  const client = remoteClient(flags, io);
  const { url } = remoteTarget(flags, io);
  const json = flags.json === true;
  const redraw = io.isTTY && !json;
  for (let refresh = 1; !io.signal.aborted; refresh++) {
    const at = new Date().toISOString();
    let lines: string[];
    try {
      const [fleet, { lanes }] = await Promise.all([
        client.fleet({ signal: io.signal }),
        client.lanes({ signal: io.signal }),
      ]);
      if (json) {
        line(io.out, JSON.stringify({ at, fleet, lanes }));
        lines = [];
      } else {
        lines = [
          `workers: ${fleet.live} live, ${fleet.dead} dead`,
          ...(fleet.workers.length > 0 ? workersTable(fleet) : []),
          '',
          `lanes: ${lanes.length}`,
          ...(lanes.length > 0 ? lanesTable(lanes) : []),
        ];
      }
    } catch (error) {
      if (io.signal.aborted) break;
      if (!isFlowfleetError(error) || FATAL_CODES.has(error.code)) throw error;
      if (json)
        line(io.out, JSON.stringify({ at, error: { code: error.code, message: error.message } }));
      lines = [`${error.code}: ${error.message} (retrying)`];
    }
    if (!json) {
      const header = `flowfleet watch ${url}  ${at}${redraw ? '  (Ctrl-C to exit)' : ''}`;
      if (redraw) io.out('\x1b[2J\x1b[H');
      else line(io.out, `--- ${at}`);
      line(io.out, redraw ? header : `flowfleet watch ${url}`);
      for (const text of lines) line(io.out, text);
    }
    if (flags.count !== undefined && refresh >= flags.count) break;
    try {
      await sleep(flags.interval, undefined, { signal: io.signal });
    } catch {
      break; // aborted: Ctrl-C is how a watch ends
    }
  }
  return EXIT_CODES.ok;
}
