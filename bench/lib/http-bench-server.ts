// The server side of bench:http, run as a child process so that its CPU is measured apart from
// the client's: a fastify server doing the work of the coordinator's four routes the bench
// calls, with the coordinator's body handling (JSON bodies parsed by fastify, octet-stream
// bodies taken as the raw request stream and collected, blobs streamed from a file with their
// Content-Length). Answers `{cpu}` to every IPC message with its process.cpuUsage().
import { createReadStream, statSync } from 'node:fs';
import Fastify from 'fastify';

const blobPath = process.argv[2];
if (blobPath === undefined || process.send === undefined) {
  throw new Error('usage: forked by bench/http.ts with the blob path as argument');
}
const blobBytes = statSync(blobPath).size;

/** What a JobStatus of a running rollout looks like on the wire (~500 bytes). */
const STATUS = {
  id: 'lane-0123456789abcdef.6f1c2a8e-8a51-4c5e-9d0b-2f3c4d5e6f70',
  lane: 'lane-0123456789abcdef',
  state: 'active',
  progress: { step: 4, steps: 10 },
  attempts: 1,
  enqueuedAt: '2026-12-01T10:00:00.000Z',
  startedAt: '2026-12-01T10:00:00.120Z',
  workerId: 'worker-a-1',
  request: { model: 'wan21-mini', steps: 10, group: 4, sampler: 'flow-sde' },
  requirements: { model: 'wan21-mini', device: 'cpu', minArch: null, ops: ['flow_sde_step'] },
};

const app = Fastify({ bodyLimit: 1 << 20 });
app.addContentTypeParser('application/octet-stream', (_request, payload, done) => {
  done(null, payload);
});
app.get('/v1/rollouts/:id', async () => STATUS);
app.post('/v1/rollouts', async (request, reply) => {
  const body = request.body as { prompt?: unknown };
  if (typeof body.prompt !== 'string') return reply.status(400).send({ code: 'BAD' });
  return reply
    .status(202)
    .send({ id: STATUS.id, lane: STATUS.lane, status: 'queued', eligibleWorkers: 2 });
});
app.put('/v1/results/:id', async (request, reply) => {
  let sizeBytes = 0;
  for await (const chunk of request.body as AsyncIterable<Uint8Array>) sizeBytes += chunk.length;
  return reply.status(201).send({
    id: (request.params as { id: string }).id,
    sha256: '0'.repeat(64),
    sizeBytes,
    status: 'created',
    summary: 'created',
  });
});
app.get('/v1/blobs/:sha256', async (_request, reply) =>
  reply
    .header('content-type', 'application/octet-stream')
    .header('content-length', blobBytes)
    .send(createReadStream(blobPath)),
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', () => process.send?.({ cpu: process.cpuUsage() }));
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
process.send({ url });
