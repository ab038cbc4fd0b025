// The `flowfleet` process: signals → runCli → exit code. The only module with signal handlers.
// The first SIGINT/SIGTERM aborts `io.signal` (commands stop and clean up: `up` and `demo` stop
// workers, coordinator and Redis in that order); a second one, later than a moment after the
// first (a terminal may deliver one Ctrl-C twice through a wrapper), aborts `io.forceSignal`
// (children are SIGKILLed).
import { processIo } from './cli-io.js';
import { runCli } from './program.js';

/** Signals closer together than this count as one (npm/tsx wrappers relay the terminal's). */
const SAME_SIGNAL_MS = 500;

const stop = new AbortController();
const force = new AbortController();
let firstSignalAt = 0;
const onSignal = (signal: NodeJS.Signals): void => {
  if (!stop.signal.aborted) {
    firstSignalAt = Date.now();
    stop.abort(new Error(`received ${signal}`));
    return;
  }
  if (Date.now() - firstSignalAt > SAME_SIGNAL_MS && !force.signal.aborted) {
    process.stderr.write(`flowfleet: second ${signal}: killing the fleet's processes\n`);
    force.abort(new Error(`received a second ${signal}`));
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

process.exitCode = await runCli(process.argv.slice(2), processIo(stop.signal, force.signal));
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
