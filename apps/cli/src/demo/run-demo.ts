import { randomBytes } from 'node:crypto';
import type { FlowfleetClient, Matrix, RoundGroup } from '@flowfleet/client';
import { FlowfleetError } from '@flowfleet/errors';
import { encodeWeights } from '@flowfleet/models';
import { line, type CliIo } from '../cli-io.js';
import {
  fleetBanner,
  fleetDescription,
  redisUrlOf,
  type FleetFlags,
} from '../commands/up-command.js';
import { matrixSection } from '../commands/fleet-commands.js';
import { EXIT_CODES } from '../exit-codes.js';
import { childLogSink } from '../format/child-log-sink.js';
import { formatBytes, formatMs } from '../format/numbers.js';
import { ProgressBoard } from '../format/progress-board.js';
import { startLocalFleet, type LocalFleet } from '../local-fleet/local-fleet.js';
import { describeExit } from '../local-fleet/service-process.js';
import { DEMO_SHAPE, runDemoRound, type DemoRollout } from './demo-round.js';
import {
  DEMO_SECTIONS as SECTIONS,
  REWARD_LEGEND,
  demoOutput,
  rolloutLines,
  samplesTable,
  syncTable,
  type DemoOutput,
} from './demo-output.js';
import { pushDitVersion, type DemoSync } from './demo-sync.js';
import { perturbWeights } from './grpo.js';
import { WorkerEvents } from './worker-events.js';
import { fleetAfterSync } from '../fleet-after-sync.js';
import { DEFAULT_MODEL_ID, shippedComponent } from '../default-model.js';

/** Options of `flowfleet demo`. */
export interface DemoFlags extends FleetFlags {
  readonly steps: number;
  readonly group: number;
}

/** The demo's two prompts; group g of prompt p uses seeds 100·(p+1) + 1 … + g. */
export const DEMO_PROMPTS = [
  'a red fox running through fresh snow',
  'a paper boat drifting down a rainy street',
];

/** The "trainer update" between v1 and v2: each tensor moves by this × its RMS × N(0, 1). */
const UPDATE_SCALE = 0.1;

/**
 * `flowfleet demo` (= `npm start`): a local fleet, then one FlowGRPO-style round as a trainer runs
 * it — push weights v1, roll out 2 prompts × a group (SDE) with progress, per-sample log-probs,
 * rewards and advantages, push v2 and show it reach every worker, roll out again on v2, print the
 * capability matrix — and shut the fleet down (always, also on failure or Ctrl-C).
 * @returns 0 when every step worked
 * @throws FlowfleetError CLI_DEMO_CHECK_FAILED, CLI_CHILD_FAILED, CLI_REDIS_UNAVAILABLE, the
 *   client's codes
 */
export async function runDemo(flags: DemoFlags, io: CliIo): Promise<number> {
  const json = flags.json === true;
  const out = demoOutput(io, json);
  const started = performance.now();
  const events = new WorkerEvents();
  let board: ProgressBoard | undefined;
  const showChildLine = childLogSink({
    level: flags.logLevel,
    verbose: flags.verbose === true,
    // Child lines go to stderr, or above the progress bars while they are drawn.
    write: (text) =>
      board !== undefined && io.isTTY && !json ? board.log(text) : line(io.err, text),
  });
  const groups: RoundGroup[] = DEMO_PROMPTS.map((prompt, p) => ({
    prompt,
    seeds: Array.from({ length: flags.group }, (_, i) => 100 * (p + 1) + i + 1),
  }));

  out.say(
    `flowfleet demo: one FlowGRPO-style round on a local fleet (${flags.workers} workers; ` +
      `${groups.length} prompts × a group of ${flags.group}, SDE, ${flags.steps} steps, latent ` +
      `${DEMO_SHAPE.frames}×${DEMO_SHAPE.height}×${DEMO_SHAPE.width})`,
  );
  out.section(1, 'local fleet');
  const redisUrl = redisUrlOf(flags, io);
  // On a shared Redis the demo's weight versions 1 and 2 must not meet an earlier run's: a fresh
  // key prefix per run unless --prefix names one (its keys stay in that Redis afterwards).
  const prefix =
    flags.prefix ?? (redisUrl === undefined ? undefined : `demo-${randomBytes(3).toString('hex')}`);
  const fleet = await startLocalFleet({
    workers: flags.workers,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    ...(flags.port === undefined ? {} : { port: flags.port }),
    ...(prefix === undefined ? {} : { prefix }),
    backend: flags.backend,
    // Children log at info so the demo can follow weight-sync events; it shows flags.logLevel.
    logLevel: 'info',
    onLog: (service, record) => {
      events.observe(record);
      showChildLine(service, record);
    },
    signal: io.signal,
    env: io.env,
  });
  const fleetMs = performance.now() - started;
  out.lines(fleetBanner(fleet));
  out.say(`  up in ${formatMs(fleetMs)}`);

  // A child that dies mid-demo aborts whatever the demo is waiting for, and is the error shown.
  const childDied = new AbortController();
  let childFailure: FlowfleetError | undefined;
  void fleet.unexpectedExit.then((exit) => {
    childFailure = new FlowfleetError(
      'CLI_CHILD_FAILED',
      `${exit.service} ${describeExit(exit.exit)} during the demo; its last output:\n${exit.output.trimEnd()}`,
      { details: { service: exit.service } },
    );
    childDied.abort(childFailure);
  });
  const force = (): void => fleet.kill();
  io.forceSignal.addEventListener('abort', force, { once: true });
  const signal = AbortSignal.any([io.signal, childDied.signal]);

  let report: Record<string, unknown>;
  try {
    report = await demoBody(
      fleet,
      groups,
      flags,
      signal,
      out,
      events,
      (b) => (board = b),
      io,
      json,
    );
  } catch (error) {
    throw childFailure ?? error;
  } finally {
    board = undefined;
    out.section(SECTIONS, 'shut down');
    const stopping = performance.now();
    try {
      await fleet.close();
    } finally {
      io.forceSignal.removeEventListener('abort', force);
    }
    const what =
      fleet.redis.kind === 'external'
        ? `workers and coordinator stopped (the given Redis keeps the keys under ${fleet.prefix})`
        : 'workers, coordinator and redis stopped';
    out.say(`  ${what} in ${formatMs(performance.now() - stopping)}`);
  }
  const totalMs = performance.now() - started;
  if (json) {
    line(
      io.out,
      JSON.stringify({ ok: true, ...report, timings: { fleetStartMs: fleetMs, totalMs } }),
    );
  } else {
    out.say('');
    out.say(`demo finished in ${formatMs(totalMs)}: exit 0`);
  }
  return EXIT_CODES.ok;
}

async function demoBody(
  fleet: LocalFleet,
  groups: readonly RoundGroup[],
  flags: DemoFlags,
  signal: AbortSignal,
  out: DemoOutput,
  events: WorkerEvents,
  setBoard: (board: ProgressBoard | undefined) => void,
  io: CliIo,
  json: boolean,
): Promise<Record<string, unknown>> {
  const client = fleet.client();
  const newBoard = (): ProgressBoard => {
    const board = new ProgressBoard(json ? () => undefined : io.out, io.isTTY && !json, io.columns);
    setBoard(board);
    return board;
  };
  const model = DEFAULT_MODEL_ID;

  out.section(2, 'push weights v1 (dit = initWeights(seed 1), as a trainer starts)');
  const v1Weights = shippedComponent(model, 'dit').initWeights(1);
  const v1 = await pushDitVersion(client, encodeWeights(v1Weights), 1, signal);
  await showSync(client, v1, out, events, signal);

  out.section(
    3,
    `rollouts on dit v1: ${groups.length} prompts × ${flags.group} seeds, SDE, ${flags.steps} steps`,
  );
  const round1 = await runDemoRound({
    client,
    model,
    groups,
    steps: flags.steps,
    ditVersion: 1,
    board: newBoard(),
    signal,
  });
  setBoard(undefined);
  showRound(round1, undefined, out);

  out.section(4, `trainer update → push weights v2 (v1 + ${UPDATE_SCALE}·RMS·N(0,1) per tensor)`);
  const v2 = await pushDitVersion(
    client,
    encodeWeights(perturbWeights(v1Weights, 2, UPDATE_SCALE)),
    2,
    signal,
  );
  await showSync(client, v2, out, events, signal);

  out.section(5, 'rollouts on dit v2 (same prompts and seeds)');
  const round2 = await runDemoRound({
    client,
    model,
    groups,
    steps: flags.steps,
    ditVersion: 2,
    board: newBoard(),
    signal,
  });
  setBoard(undefined);
  showRound(round2, round1, out);
  out.say(
    '  same seeds, same noise: the Σ log-prob of a fresh sample depends only on its noise and the σ ' +
      'schedule, so it repeats (up to float32 rounding); the new weights move the trajectory (Δ reward).',
  );

  out.section(6, 'capability matrix');
  const matrix: Matrix = await client.matrix({ signal });
  out.lines(matrixSection(matrix));

  return {
    fleet: fleetDescription(fleet),
    syncs: [v1, v2].map((s) => ({
      component: 'dit',
      version: s.sync.version,
      sha256: s.blob.sha256,
      sizeBytes: s.blob.sizeBytes,
      acks: s.progress.acks,
      ackMs: s.ackMs,
      evictedGraphs: Object.fromEntries(
        events
          .staged('dit', s.sync.version)
          .filter((e) => e.evictedGraphs !== undefined)
          .map((e) => [e.workerId, e.evictedGraphs]),
      ),
    })),
    rounds: [
      { ditVersion: 1, rollouts: round1 },
      { ditVersion: 2, rollouts: round2 },
    ],
    matrix,
  };
}

async function showSync(
  client: FlowfleetClient,
  pushed: DemoSync,
  out: DemoOutput,
  events: WorkerEvents,
  signal: AbortSignal,
): Promise<void> {
  const { blob, sync, progress } = pushed;
  out.say(
    `  uploaded ${formatBytes(blob.sizeBytes)} (sha256 ${blob.sha256.slice(0, 16)}…), synced dit v${sync.version} ` +
      `(previous ${sync.previous ?? 'none'}): ${progress.okWorkers.length}/${progress.liveWorkers.length} live workers hold it`,
  );
  const [report, fleetView] = await Promise.all([
    client.weights('dit', {}, { signal }),
    fleetAfterSync(client, 'dit', sync.version, progress.okWorkers, signal),
  ]);
  out.lines(syncTable(pushed, report, fleetView, events.staged('dit', sync.version)));
  if (sync.previous !== null) {
    out.say(
      `  each worker staged v${sync.version} and released v${sync.previous}: its captured dit graphs are evicted ` +
        '(text_encoder graphs stay), so the next rollouts capture new dit graphs (see "graphs:" in step 5)',
    );
  }
}

function showRound(
  rollouts: readonly DemoRollout[],
  previous: readonly DemoRollout[] | undefined,
  out: DemoOutput,
): void {
  out.lines(rolloutLines(rollouts));
  out.lines(samplesTable(rollouts, previous));
  out.lines(REWARD_LEGEND);
}
