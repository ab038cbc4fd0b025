import type { Command } from 'commander';
import { integerIn, oneOf } from '../cli-args.js';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { childLogSink } from '../format/child-log-sink.js';
import { LOG_LEVELS, type LogLevel } from '../format/log-line.js';
import { formatMs } from '../format/numbers.js';
import { startLocalFleet, type LocalFleet } from '../local-fleet/local-fleet.js';
import { describeExit } from '../local-fleet/service-process.js';

/** Options of `flowfleet up` (and the fleet part of `demo`). */
export interface FleetFlags {
  readonly workers: number;
  readonly redis?: string;
  readonly port?: number;
  readonly prefix?: string;
  readonly backend: 'auto' | 'cpu' | 'ort-cpu';
  readonly logLevel: LogLevel;
  readonly verbose?: boolean;
  readonly json?: boolean;
}

const BACKENDS = ['auto', 'cpu', 'ort-cpu'] as const;

/** Adds the local-fleet flags (`--workers`, `--redis`, …) to `up` and `demo`. */
export function withFleetOptions(command: Command, defaultLogLevel: LogLevel): Command {
  return command
    .option('-w, --workers <n>', 'worker processes', integerIn(1, 16), 2)
    .option('--redis <url>', 'use this Redis (env REDIS_URL) instead of starting one')
    .option('--port <port>', 'coordinator port (default: a free one)', integerIn(1, 65_535))
    .option(
      '--prefix <prefix>',
      'Redis key prefix (default ff; demo on a shared Redis: demo-<random>)',
    )
    .option(
      '--backend <backend>',
      `worker backend: ${BACKENDS.join(', ')}`,
      oneOf(BACKENDS),
      'auto',
    )
    .option(
      '--log-level <level>',
      `lowest child log level shown: ${LOG_LEVELS.join(', ')}`,
      oneOf(LOG_LEVELS),
      defaultLogLevel,
    )
    .option('-v, --verbose', 'also show HTTP access lines and redis-server output')
    .option('--json', 'print machine-readable JSON only (child logs go to stderr)');
}

/** The environment's REDIS_URL unless --redis is given (empty means unset). */
export function redisUrlOf(
  flags: Pick<FleetFlags, 'redis'>,
  io: Pick<CliIo, 'env'>,
): string | undefined {
  const url = flags.redis ?? io.env['REDIS_URL'];
  return url === undefined || url === '' ? undefined : url;
}

/** What `up --json` prints once the fleet is ready. */
export function fleetDescription(fleet: LocalFleet): Record<string, unknown> {
  return {
    url: fleet.url,
    dashboardUrl: fleet.dashboardUrl,
    tokens: fleet.tokens,
    prefix: fleet.prefix,
    blobDir: fleet.blobDir,
    redis: {
      kind: fleet.redis.kind,
      url: fleet.redis.url,
      ...(fleet.redis.pid === undefined ? {} : { pid: fleet.redis.pid }),
    },
    coordinator: { pid: fleet.coordinatorPid },
    workers: fleet.workers.map((w) => ({ id: w.id, pid: w.pid })),
    ...(fleet.reaperPid === undefined ? {} : { reaper: { pid: fleet.reaperPid } }),
  };
}

/** The human banner of a ready fleet. */
export function fleetBanner(fleet: LocalFleet): string[] {
  const redis =
    fleet.redis.kind === 'redis-server'
      ? `${fleet.redis.url} (redis-server pid ${fleet.redis.pid ?? '?'}, AOF on, temp dir)`
      : `${fleet.redis.url} (${fleet.redis.kind})`;
  return [
    `  redis        ${redis}`,
    `  coordinator  ${fleet.url} (pid ${fleet.coordinatorPid})`,
    `  dashboard    ${fleet.dashboardUrl}`,
    `  workers      ${fleet.workers.map((w) => `${w.id} (pid ${w.pid})`).join(', ')}`,
  ];
}

/**
 * The banner's second half: each role's token and how to use it — the trainer's environment, the
 * viewer's token, and the environment that joins another worker to this fleet.
 */
export function fleetCredentials(
  fleet: Pick<LocalFleet, 'url' | 'tokens' | 'prefix'> & {
    readonly redis: { readonly url: string };
  },
): string[] {
  return [
    `  trainer      FLOWFLEET_URL=${fleet.url} FLOWFLEET_TOKEN=${fleet.tokens.trainer}`,
    `  viewer token ${fleet.tokens.viewer}`,
    `  worker token ${fleet.tokens.worker}`,
    `  add a worker REDIS_URL=${fleet.redis.url} FLOWFLEET_PREFIX=${fleet.prefix} FLOWFLEET_COORDINATOR_URL=${fleet.url} FLOWFLEET_WORKER_TOKEN=${fleet.tokens.worker} npm run worker`,
    '  try          npm run flowfleet -- rollout --prompt "a red fox" --seeds 1-4  (with the trainer env above)',
  ];
}

/**
 * `flowfleet up`: starts a local fleet, prints where everything is, relays the children's logs
 * (prefixed) until Ctrl-C or SIGTERM, then stops workers, coordinator and Redis in that order.
 * @returns 0 after a clean shutdown; 1 when a child exits on its own (the rest is stopped too)
 */
export async function runUp(flags: FleetFlags, io: CliIo): Promise<number> {
  const json = flags.json === true;
  const write = json ? io.err : io.out;
  const started = performance.now();
  const redisUrl = redisUrlOf(flags, io);
  let fleet: LocalFleet;
  try {
    fleet = await startLocalFleet({
      workers: flags.workers,
      ...(redisUrl === undefined ? {} : { redisUrl }),
      ...(flags.port === undefined ? {} : { port: flags.port }),
      ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
      backend: flags.backend,
      logLevel: flags.logLevel,
      onLog: childLogSink({
        level: flags.logLevel,
        verbose: flags.verbose === true,
        write: (text) => line(write, text),
      }),
      signal: io.signal,
      env: io.env,
    });
  } catch (error) {
    if (io.signal.aborted) {
      line(io.err, 'flowfleet up: interrupted during start-up; everything started was stopped');
      return EXIT_CODES.ok;
    }
    throw error;
  }
  const force = (): void => fleet.kill();
  io.forceSignal.addEventListener('abort', force, { once: true });

  if (json) {
    line(io.out, JSON.stringify({ event: 'ready', ...fleetDescription(fleet) }));
  } else {
    line(io.out, `flowfleet: local fleet up in ${formatMs(performance.now() - started)}`);
    for (const text of [...fleetBanner(fleet), ...fleetCredentials(fleet)]) line(io.out, text);
    line(io.out, 'Ctrl-C stops the fleet.');
  }

  const aborted = new Promise<'signal'>((resolve) => {
    if (io.signal.aborted) resolve('signal');
    io.signal.addEventListener('abort', () => resolve('signal'), { once: true });
  });
  const outcome = await Promise.race([aborted, fleet.unexpectedExit]);
  let code: number = EXIT_CODES.ok;
  if (outcome !== 'signal') {
    line(
      io.err,
      `flowfleet up: ${outcome.service} ${describeExit(outcome.exit)}; stopping the fleet`,
    );
    code = EXIT_CODES.failure;
  }
  const stopping = performance.now();
  if (!json) line(io.out, 'flowfleet: stopping workers, coordinator, redis…');
  try {
    await fleet.close();
  } finally {
    io.forceSignal.removeEventListener('abort', force);
  }
  if (json) line(io.out, JSON.stringify({ event: 'stopped', exitCode: code }));
  else line(io.out, `flowfleet: fleet stopped in ${formatMs(performance.now() - stopping)}`);
  return code;
}
