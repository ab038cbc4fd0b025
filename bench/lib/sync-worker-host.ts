// One host process of bench:sync's fleet: `BENCH_SYNC_COUNT` in-process workers numbered from
// `BENCH_SYNC_FIRST` (bench-fleet's startBenchWorkers, serving the sync card, one copy of its
// initial weights per process), each with its own peer server (`BENCH_SYNC_PEER=1`) and egress
// cap (`BENCH_SYNC_RATE` bytes/s). The bench spreads its workers over a few of these so that the
// simulated hosts use both cores instead of one event loop. Sends `{ready: true}` once every
// worker has started; IPC `{op: 'cpu'}` answers `process.cpuUsage()` (µs, every thread); SIGTERM
// closes the workers and exits.
import { closeWorkers, startBenchWorkers } from './bench-fleet.js';
import { SYNC_CARD } from './sync-payloads.js';

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

const count = Number(env('BENCH_SYNC_COUNT'));
const rate = Number(env('BENCH_SYNC_RATE'));
const workers = await startBenchWorkers(count, {
  redisUrl: env('REDIS_URL'),
  coordinator: { url: env('FLOWFLEET_COORDINATOR_URL'), prefix: env('FLOWFLEET_PREFIX') },
  workerToken: env('FLOWFLEET_WORKER_TOKEN'),
  firstIndex: Number(env('BENCH_SYNC_FIRST')),
  card: SYNC_CARD,
  concurrency: 1,
  peer: process.env['BENCH_SYNC_PEER'] === '1' ? { host: '127.0.0.1', port: 0 } : false,
  egressBytesPerSecond: rate,
});
process.on('message', (message: { op?: string }) => {
  if (message.op === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.once('SIGTERM', () => void closeWorkers(workers).then(() => process.exit(0)));
process.send?.({ ready: true });
