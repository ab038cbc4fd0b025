// The worker's BullMQ job queue passes the JobQueue contract on a real redis-server, both with the
// lane event waker (an `events` connection) and without it (polling).
import { createBullmqJobQueue, type JobQueue, type LockSettings } from '@flowfleet/worker';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';
import {
  describeJobQueueContract,
  type InspectedJob,
  type JobQueueBinding,
  type QueueFixture,
} from './job-queue-contract.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

const logger =
  process.env['WORKER_TEST_LOG'] === undefined
    ? pino({ level: 'silent' })
    : pino({ level: process.env['WORKER_TEST_LOG'] });

function connect(): Redis {
  return new Redis(server.url, { maxRetriesPerRequest: null });
}

function bullmqBinding(withWaker: boolean): JobQueueBinding {
  return {
    wakesOnNewJobs: withWaker,
    async fixture(): Promise<QueueFixture> {
      const prefix = `{${uniquePrefix(withWaker ? 'bullmq-waker' : 'bullmq-poll')}}:bull`;
      const admin = connect();
      const producers = new Map<string, Queue>();
      const opened: { queue: JobQueue<unknown>; connections: Redis[] }[] = [];
      let serial = 0;
      const producer = (lane: string): Queue => {
        let queue = producers.get(lane);
        if (queue === undefined) {
          queue = new Queue(lane, { connection: admin, prefix });
          producers.set(lane, queue);
        }
        return queue;
      };
      return {
        async open(locks: LockSettings) {
          serial += 1;
          const connection = connect();
          const events = withWaker ? connect() : undefined;
          const queue = createBullmqJobQueue<unknown>({
            connection,
            ...(events === undefined ? {} : { events }),
            bullPrefix: () => prefix,
            consumerName: `consumer-${serial}`,
            locks,
            logger,
          });
          opened.push({
            queue,
            connections: events === undefined ? [connection] : [connection, events],
          });
          return queue;
        },
        async kill(queue) {
          const entry = opened.find((each) => each.queue === queue);
          if (entry === undefined) throw new Error('not a queue of this fixture');
          // Cut first: closing then cannot settle anything (its hand-backs fail), it only stops
          // the timers, as a process that died would.
          for (const connection of entry.connections) connection.disconnect();
          await queue.close().catch(() => undefined);
        },
        async enqueue(lane, id, data, options = {}) {
          await producer(lane).add('rollout', data, {
            jobId: id,
            ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
          });
        },
        async inspect(lane, id): Promise<InspectedJob> {
          const job = await producer(lane).getJob(id);
          if (job === undefined) throw new Error(`no job ${id} in ${lane}`);
          const state = await job.getState();
          const known = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
          return {
            state: (known as readonly string[]).includes(state)
              ? (state as InspectedJob['state'])
              : 'unknown',
            returnValue: job.returnvalue,
            progress: job.progress,
            attemptsMade: job.attemptsMade,
            failedReason: job.failedReason,
          };
        },
        async close() {
          await Promise.allSettled(opened.map(({ queue }) => queue.close()));
          for (const { connections } of opened) for (const each of connections) each.disconnect();
          await Promise.allSettled([...producers.values()].map((queue) => queue.close()));
          const keys = await admin.keys(`${prefix}*`);
          if (keys.length > 0) await admin.del(...keys);
          admin.disconnect();
        },
      };
    },
  };
}

describeJobQueueContract('BullMQ with the lane event waker', bullmqBinding(true));
describeJobQueueContract('BullMQ, polling', bullmqBinding(false));
