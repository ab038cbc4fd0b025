// The queue bench's second baseline, "the architecture's floor": raw BullMQ plus only the I/O the
// design itself requires of any implementation — the trainer's HTTP request that enqueues, and
// the worker's HTTP upload of the job's two result files into the same durable file store. No
// validation, capacity check, lanes, progress, runtime or summary: a bare fastify server with
// two routes, a raw BullMQ Worker, the SDK's transport for both hops (undici, as ours uses). Where
// ours falls short of the floor is our overhead; where the floor falls short of raw BullMQ is
// what the two HTTP hops and durable result files cost whatever the implementation.
import { FsBlobStore } from '@flowfleet/coordinator';
import { HttpTransport, resolveClientOptions } from '@flowfleet/client';
import { SUMMARY_BYTES_HEADER, type RolloutJob } from '@flowfleet/protocol';
import Fastify from 'fastify';
import type { QueuePath } from './queue-phases.js';
import { startRawQueue, type RawPathOptions } from './raw-bullmq-path.js';

/** What the floor path is built from: the raw path's options plus where and what it stores. */
export interface FloorPathOptions extends RawPathOptions {
  readonly blobDir: string;
  /** Sizes of ours' stored files, so both paths write as many bytes. */
  readonly resultBytes: number;
  readonly summaryBytes: number;
}

function split(body: Buffer, summaryBytes: number): [Buffer, Buffer] {
  return [body.subarray(0, summaryBytes), body.subarray(summaryBytes)];
}

/** Starts the floor's server, queue and workers; everything is registered with `teardown`. */
export async function startFloorPath(options: FloorPathOptions): Promise<QueuePath> {
  const { teardown } = options;
  const store = new FsBlobStore(options.blobDir);
  await store.init();
  teardown.add('floor store', () => store.close());
  // The workers' uploads go to the server started below (no job is added before it listens).
  const client: { http?: HttpTransport } = {};
  const resultBody = [
    Buffer.alloc(options.summaryBytes, 0x7b),
    Buffer.alloc(options.resultBytes, 1),
  ];
  const raw = await startRawQueue(options, 'bench-floor', async (job) => {
    // A non-2xx answer throws: the job fails and the bench reports it.
    await client.http?.text({
      method: 'PUT',
      path: `/results/${job.data.id}`,
      headers: { [SUMMARY_BYTES_HEADER]: String(options.summaryBytes) },
      bytes: resultBody,
      idempotent: true,
    });
    return { ok: true };
  });

  const app = Fastify({ bodyLimit: 1 << 20 });
  app.addContentTypeParser(
    'application/octet-stream',
    { parseAs: 'buffer' },
    (_request, body, done) => done(null, body),
  );
  app.post('/enqueue', async (request, reply) => {
    const data = request.body as RolloutJob;
    await raw.add(data);
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
  const transport = new HttpTransport(resolveClientOptions({ baseUrl: url }));
  client.http = transport;
  teardown.add('floor client', () => transport.close());

  return {
    name: 'floor: raw BullMQ + 2 HTTP hops + result files',
    watch: raw.watch,
    async add(tag) {
      const data = raw.payload(tag);
      await transport.text({ method: 'POST', path: '/enqueue', json: data, idempotent: false });
      return data.id;
    },
  };
}
