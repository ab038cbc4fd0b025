// The queue bench's second baseline, "the architecture's floor": raw BullMQ plus only the I/O the
// design itself requires of any implementation — the trainer's HTTP request that enqueues, and
// the worker's HTTP upload of the job's two result files into the same durable file store. No
// validation, capacity check, lanes, progress, runtime or summary: a bare fastify server with
// two routes, a raw BullMQ Worker, node:http for both hops (httpExchange, as ours uses). Where
// ours falls short of the floor is our overhead; where the floor falls short of raw BullMQ is
// what the two HTTP hops and durable result files cost whatever the implementation.
import { randomUUID } from 'node:crypto';
import { FsBlobStore, JOB_ATTEMPTS, JOB_RETENTION_SECONDS } from '@flowfleet/coordinator';
import { SUMMARY_BYTES_HEADER, httpExchange, type RolloutJob } from '@flowfleet/protocol';
import { Queue, Worker } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { benchPrefix, deletePrefix } from './bench-fleet.js';
import { CompletionWatch, promptOf, tagOf } from './job-tracker.js';
import type { QueuePath } from './queue-phases.js';
import type { RawPathOptions } from './raw-bullmq-path.js';

/** What the floor path is built from: the raw path's options plus where and what it stores. */
export interface FloorPathOptions extends RawPathOptions {
  readonly blobDir: string;
  /** Sizes of ours' stored files, so both paths write as many bytes. */
  readonly resultBytes: number;
  readonly summaryBytes: number;
}

const QUEUE_NAME = 'bench-floor';

function split(body: Buffer, summaryBytes: number): [Buffer, Buffer] {
  return [body.subarray(0, summaryBytes), body.subarray(summaryBytes)];
}

/** Starts the floor's server, queue and workers; everything is registered with `teardown`. */
export async function startFloorPath(options: FloorPathOptions): Promise<QueuePath> {
  const { redisUrl, clock, teardown } = options;
  const prefix = benchPrefix('floor');
  const bullPrefix = `{${prefix}}:bull`;
  teardown.add('floor keys', () => deletePrefix(redisUrl, prefix));
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  teardown.add('floor connection', async () => connection.disconnect());
  const queue = new Queue(QUEUE_NAME, { connection, prefix: bullPrefix });
  teardown.add('floor queue', () => queue.close());
  const store = new FsBlobStore(options.blobDir);
  await store.init();
  teardown.add('floor store', () => store.close());

  const app = Fastify({ bodyLimit: 1 << 20 });
  app.addContentTypeParser(
    'application/octet-stream',
    { parseAs: 'buffer' },
    (_request, body, done) => done(null, body),
  );
  app.post('/enqueue', async (request, reply) => {
    const data = request.body as RolloutJob;
    await queue.add('rollout', data, {
      jobId: data.id,
      attempts: JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: { age: JOB_RETENTION_SECONDS },
      removeOnFail: { age: JOB_RETENTION_SECONDS },
    });
    return reply.status(202).send({ id: data.id });
  });
  app.put('/results/:id', async (request, reply) => {
    const { id } = request.params as { id: string };
    const [summary, result] = split(
      request.body as Buffer,
      Number(request.headers[SUMMARY_BYTES_HEADER]),
    );
    await store.putResult(id, 'result.safetensors', [result], result.byteLength);
    await store.putResult(id, 'summary.json', [summary], summary.byteLength);
    return reply.status(201).send({ id });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  teardown.add('floor server', () => app.close());

  const resultBody = [
    Buffer.alloc(options.summaryBytes, 0x7b),
    Buffer.alloc(options.resultBytes, 1),
  ];
  const workers = Array.from(
    { length: options.workers },
    () =>
      new Worker<RolloutJob>(
        QUEUE_NAME,
        async (job) => {
          const tag = tagOf(job.data.request.prompt);
          if (tag !== undefined) clock.stamp(tag, 'started');
          const stored = await httpExchange({
            url: `${url}/results/${job.data.id}`,
            method: 'PUT',
            headers: {
              'content-type': 'application/octet-stream',
              [SUMMARY_BYTES_HEADER]: String(options.summaryBytes),
            },
            body: resultBody,
          });
          if (stored.status !== 201) throw new Error(`floor upload: ${stored.status}`);
          return { ok: true };
        },
        {
          connection,
          prefix: bullPrefix,
          concurrency: options.concurrency,
          lockDuration: 30_000,
          stalledInterval: 15_000,
          maxStalledCount: 3,
        },
      ),
  );
  teardown.add('floor workers', () => Promise.all(workers.map((worker) => worker.close())));
  const watch = await CompletionWatch.open(redisUrl, QUEUE_NAME, bullPrefix);
  teardown.add('floor events', () => watch.close());
  return {
    name: 'floor: raw BullMQ + 2 HTTP hops + result files',
    watch,
    async add(tag) {
      const id = randomUUID();
      const data: RolloutJob = {
        id,
        lane: QUEUE_NAME,
        request: { ...options.request, prompt: promptOf(tag) },
        requirements: options.requirements,
        enqueuedAt: new Date().toISOString(),
      };
      const answer = await httpExchange({
        url: `${url}/enqueue`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(data),
      });
      if (answer.status !== 202) throw new Error(`floor enqueue: ${answer.status}`);
      return id;
    },
  };
}
