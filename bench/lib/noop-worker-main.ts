// A worker process serving only the no-op card (bench/lib/noop-card.ts): the worker app's own
// environment parsing and createWorker, with `cards`/`models` set to the no-op card, so what a
// job costs here is the fleet's dispatch — queue, validation, runtime loop, progress, result
// upload — and not compute. `BENCH_NOOP_CARD` names the card id. An IPC message `{op: 'cpu'}`
// answers `process.cpuUsage()` (µs); SIGTERM closes it.
import { createCardRegistry } from '@flowfleet/models';
import { WAN21_MINI } from '@flowfleet/models/wan21';
import { createWorker, parseWorkerEnv, workerOptionsFromEnv } from '@flowfleet/worker';
import { pino } from 'pino';
import { noopCard } from './noop-card.js';

const env = parseWorkerEnv(process.env);
const card = noopCard({ id: process.env['BENCH_NOOP_CARD'] ?? 'bench-noop', config: WAN21_MINI });
const worker = createWorker({
  ...workerOptionsFromEnv(env),
  cards: createCardRegistry([card]),
  models: [card.id],
  logger: pino({ level: env.FLOWFLEET_LOG_LEVEL, base: { service: 'worker', pid: process.pid } }),
});
process.on('message', (message: { op: string }) => {
  if (message.op === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
await worker.start();
