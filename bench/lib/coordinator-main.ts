// The coordinator as its own process for bench:scale (so its memory and CPU are its own): the
// coordinator app's createCoordinator on `REDIS_URL` under `FLOWFLEET_PREFIX`, auth on with the
// tokens in `BENCH_TOKENS_JSON`, in `FLOWFLEET_REDIS_MODE` (standalone or cluster), the shipped cards plus the no-op card (`BENCH_NOOP_CARD`) the
// bench's real workers serve. Sends `{url}` over IPC once listening; `{op: 'memory'}` answers
// process.memoryUsage(), `{op: 'cpu'}` process.cpuUsage(); SIGTERM closes it.
import { createCoordinator, type CoordinatorTokens } from '@flowfleet/coordinator';
import { createCardRegistry, DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { WAN21_MINI } from '@flowfleet/models/wan21';
import { RedisModeSchema } from '@flowfleet/redis';
import { pino } from 'pino';
import { noopCard } from './noop-card.js';

const tokens = JSON.parse(process.env['BENCH_TOKENS_JSON'] ?? 'null') as CoordinatorTokens | null;
const coordinator = createCoordinator({
  redisUrl: process.env['REDIS_URL'] ?? '',
  prefix: process.env['FLOWFLEET_PREFIX'] ?? 'ff',
  redisMode: RedisModeSchema.parse(process.env['FLOWFLEET_REDIS_MODE'] ?? 'standalone'),
  tokens,
  blobDir: process.env['FLOWFLEET_BLOB_DIR'] ?? '',
  logger: pino({ level: 'warn', base: { service: 'coordinator', pid: process.pid } }),
  cards: createCardRegistry([
    ...DEFAULT_CARD_REGISTRY.cards,
    noopCard({ id: process.env['BENCH_NOOP_CARD'] ?? 'bench-noop', config: WAN21_MINI }),
  ]),
});
process.on('message', (message: { op: string }) => {
  if (message.op === 'memory') process.send?.({ memory: process.memoryUsage() });
  if (message.op === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.once('SIGTERM', () => void coordinator.close().finally(() => process.exit(0)));
const url = await coordinator.start(0);
process.send?.({ url });
