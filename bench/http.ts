// bench:http — what one coordinator request costs on each HTTP client, in one run against the
// same fastify server (bench/lib/http-bench-server.ts, a child process doing the coordinator's
// work for the four routes below, so its CPU is measured apart from the client's).
// Workloads: GET a job status and POST an enqueue-sized JSON body (8 in flight), PUT a 200 KB
// result upload (summary + result.safetensors of a wan21-mini G=4 rollout, 4 in flight), GET a
// 16 MiB blob and sha256 it (one at a time). Clients: the SDK's transport (HttpTransport over
// undici, what trainers and workers use), bare undici Pool.request and a bare keep-alive
// node:http request (the floors under it), and Node's global fetch. Each (workload, client) is
// timed in BENCH_HTTP_ROUNDS rounds with the client order rotated; the figures are the round
// medians of requests/s and of client and server CPU µs per request (process.cpuUsage, user +
// system). bench/results/http.json holds the run that chose undici, with the node:http exchange
// the SDK and worker used before (protocol's httpExchange, since removed) as a fifth client.
import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { HttpTransport, resolveClientOptions } from '@flowfleet/client';
import { Pool } from 'undici';
import { percentile, printTable, round, writeResults } from './lib/bench-report.js';
import { runBench } from './lib/teardown.js';

const ROUNDS = Number(process.env['BENCH_HTTP_ROUNDS'] ?? 3);
const SCALE = Number(process.env['BENCH_HTTP_SCALE'] ?? 1);
const BLOB_BYTES = 16 * 2 ** 20;
const TOKEN = `Bearer bench-${randomBytes(8).toString('hex')}`;

/** A request as every client below sends it (each adds the bearer token and content type). */
interface BenchRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly json?: unknown;
  readonly bytes?: readonly Uint8Array[];
}

/** Sends a request and answers its body (the whole body is read; a non-2xx status throws). */
type Send = (request: BenchRequest) => Promise<Uint8Array>;

/** The headers and body every client but the SDK's builds the same way. */
function wireForm(request: BenchRequest): {
  headers: Record<string, string>;
  body: string | readonly Uint8Array[] | undefined;
} {
  const headers: Record<string, string> = { ...request.headers, authorization: TOKEN };
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    return { headers, body: JSON.stringify(request.json) };
  }
  if (request.bytes !== undefined) headers['content-type'] = 'application/octet-stream';
  return { headers, body: request.bytes };
}

function ok(status: number, what: string): void {
  if (status < 200 || status > 299) throw new Error(`${what}: answered ${status}`);
}

/** The clients, each bound to the server at `base`; `close` ends their connections. */
function clients(base: string): { send: Record<string, Send>; close: () => Promise<void> } {
  const transport = new HttpTransport(
    resolveClientOptions({ baseUrl: base, token: TOKEN.slice(7) }),
  );
  const pool = new Pool(base);
  const agent = new HttpAgent({ keepAlive: true });
  const send: Record<string, Send> = {
    'SDK transport (undici)': (r) =>
      transport.bytes({
        method: r.method,
        path: r.path,
        headers: r.headers,
        ...(r.json === undefined ? {} : { json: r.json }),
        ...(r.bytes === undefined ? {} : { bytes: r.bytes }),
        idempotent: true,
      }),
    'undici Pool.request': async (r) => {
      const { headers, body } = wireForm(r);
      if (Array.isArray(body)) {
        headers['content-length'] = String(body.reduce((n, b) => n + b.byteLength, 0));
      }
      const answer = await pool.request({
        path: r.path,
        method: r.method,
        headers,
        ...(body === undefined ? {} : { body: body as unknown as Uint8Array }),
      });
      const bytes = new Uint8Array(await answer.body.arrayBuffer());
      ok(answer.statusCode, r.path);
      return bytes;
    },
    'node:http request (bare)': (r) =>
      new Promise((resolve, reject) => {
        const { headers, body } = wireForm(r);
        const parts =
          body === undefined ? [] : typeof body === 'string' ? [Buffer.from(body)] : body;
        headers['content-length'] = String(parts.reduce((n, b) => n + b.byteLength, 0));
        const request = httpRequest(
          `${base}${r.path}`,
          { method: r.method, headers, agent },
          (answer) => {
            const chunks: Buffer[] = [];
            answer.on('data', (chunk: Buffer) => chunks.push(chunk));
            answer.on('error', reject);
            answer.on('end', () => {
              ok(answer.statusCode ?? 0, r.path);
              resolve(Buffer.concat(chunks));
            });
          },
        );
        request.on('error', reject);
        for (const part of parts) request.write(part);
        request.end();
      }),
    'global fetch': async (r) => {
      const { headers, body } = wireForm(r);
      const response = await fetch(`${base}${r.path}`, {
        method: r.method,
        headers,
        ...(body === undefined
          ? {}
          : { body: typeof body === 'string' ? body : Buffer.concat(body as Uint8Array[]) }),
      });
      const bytes = new Uint8Array(await response.arrayBuffer());
      ok(response.status, r.path);
      return bytes;
    },
  };
  return {
    send,
    close: async () => {
      await Promise.all([transport.close(), pool.close()]);
      agent.destroy();
    },
  };
}

interface Workload {
  readonly name: string;
  readonly request: BenchRequest;
  readonly n: number;
  readonly inFlight: number;
  /** Work done on each answer's body (the blob's sha256). */
  readonly check?: (body: Uint8Array) => void;
}

function workloads(blobSha256: string): Workload[] {
  const enqueue = {
    model: 'wan21-mini',
    prompt: 'a red fox running through fresh snow at dawn, cinematic, 35mm',
    seeds: [101, 102, 103, 104],
    steps: 10,
    sampler: 'flow-sde',
    guidanceScale: 4.5,
    noiseLevel: 0.7,
    shape: { channels: 4, frames: 4, height: 16, width: 16 },
    weights: { dit: { min: 3 } },
  };
  // latents [11, 4, 4, 4, 16, 16] f32 = 180,224 bytes, plus log-probs, sigmas and the header.
  const summary = new Uint8Array(1_500).fill(0x20);
  const result = randomBytes(198_500);
  const scaled = (n: number) => Math.max(4, Math.round(n * SCALE));
  return [
    {
      name: 'GET status',
      request: { method: 'GET', path: '/v1/rollouts/lane-0.x', headers: {} },
      n: scaled(4_000),
      inFlight: 8,
    },
    {
      name: 'POST enqueue',
      request: {
        method: 'POST',
        path: '/v1/rollouts',
        headers: {},
        json: enqueue,
      },
      n: scaled(4_000),
      inFlight: 8,
    },
    {
      name: 'PUT 200 KB result',
      request: {
        method: 'PUT',
        path: '/v1/results/lane-0.x',
        headers: { 'x-flowfleet-summary-bytes': String(summary.byteLength) },
        bytes: [summary, result],
      },
      n: scaled(1_000),
      inFlight: 4,
    },
    {
      name: 'GET 16 MiB blob + sha256',
      request: { method: 'GET', path: `/v1/blobs/${blobSha256}`, headers: {} },
      n: scaled(24),
      inFlight: 1,
      check: (body) => {
        if (createHash('sha256').update(body).digest('hex') !== blobSha256) {
          throw new Error('blob: sha256 mismatch');
        }
      },
    },
  ];
}

interface Sample {
  readonly requestsPerSecond: number;
  readonly clientCpuUs: number;
  readonly serverCpuUs: number;
}

const cpuMicros = (usage: NodeJS.CpuUsage): number => usage.user + usage.system;

async function run(send: Send, workload: Workload, n: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      next += 1;
      const body = await send(workload.request);
      workload.check?.(body);
    }
  };
  await Promise.all(Array.from({ length: workload.inFlight }, lane));
}

await runBench(async (teardown) => {
  const dir = mkdtempSync(join(tmpdir(), 'ff-bench-http-'));
  teardown.add('blob dir', async () => rmSync(dir, { recursive: true, force: true }));
  const blob = randomBytes(BLOB_BYTES);
  const blobPath = join(dir, 'blob');
  writeFileSync(blobPath, blob);
  const blobSha256 = createHash('sha256').update(blob).digest('hex');

  const server = fork(new URL('./lib/http-bench-server.ts', import.meta.url), [blobPath], {
    execArgv: process.execArgv,
  });
  teardown.add('server', async () => {
    if (server.connected) server.disconnect();
    await new Promise((resolve) =>
      server.exitCode === null ? server.once('exit', resolve) : resolve(0),
    );
  });
  const base = await new Promise<string>((resolve, reject) => {
    server.once('message', (message) => resolve((message as { url: string }).url));
    server.once('exit', (code) => reject(new Error(`bench server exited ${code}`)));
  });
  const serverCpu = () =>
    new Promise<number>((resolve) => {
      server.once('message', (message) =>
        resolve(cpuMicros((message as { cpu: NodeJS.CpuUsage }).cpu)),
      );
      server.send('cpu');
    });

  const bench = clients(base);
  teardown.add('clients', () => bench.close());
  const names = Object.keys(bench.send);
  const samples = new Map<string, Sample[]>();
  const all = workloads(blobSha256);
  console.log(
    `${names.length} clients × ${all.length} workloads × ${ROUNDS} rounds; server pid ${server.pid}`,
  );
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
    for (const workload of all) {
      const order = names.map((_, i) => names[(i + roundIndex) % names.length] as string);
      for (const name of order) {
        const send = bench.send[name] as Send;
        await run(send, workload, Math.max(2, Math.ceil(workload.n / 10)));
        const server0 = await serverCpu();
        const client0 = process.cpuUsage();
        const started = performance.now();
        await run(send, workload, workload.n);
        const wallMs = performance.now() - started;
        const clientCpuUs = cpuMicros(process.cpuUsage(client0));
        const serverCpuUs = (await serverCpu()) - server0;
        const key = `${workload.name}\u0000${name}`;
        samples.set(key, [
          ...(samples.get(key) ?? []),
          {
            requestsPerSecond: workload.n / (wallMs / 1000),
            clientCpuUs: clientCpuUs / workload.n,
            serverCpuUs: serverCpuUs / workload.n,
          },
        ]);
      }
    }
  }

  const median = (values: readonly number[]) => percentile(values, 50);
  const rows = all.flatMap((workload) =>
    names.map((name) => {
      const runs = samples.get(`${workload.name}\u0000${name}`) ?? [];
      const client = median(runs.map((s) => s.clientCpuUs));
      const serverUs = median(runs.map((s) => s.serverCpuUs));
      return {
        workload: workload.name,
        client: name,
        requestsPerSecond: round(median(runs.map((s) => s.requestsPerSecond)), 1),
        clientCpuUs: round(client, 1),
        serverCpuUs: round(serverUs, 1),
        totalCpuUs: round(client + serverUs, 1),
      };
    }),
  );
  printTable(
    rows.map((row) => ({
      workload: row.workload,
      client: row.client,
      'req/s': row.requestsPerSecond,
      'client CPU µs/req': row.clientCpuUs,
      'server CPU µs/req': row.serverCpuUs,
      'total CPU µs/req': row.totalCpuUs,
    })),
  );
  const file = writeResults('http', {
    figures: Object.fromEntries(
      all.map((workload) => [
        workload.name,
        Object.fromEntries(
          rows
            .filter((row) => row.workload === workload.name)
            .map(({ client, requestsPerSecond, clientCpuUs, serverCpuUs }) => [
              client,
              { requestsPerSecond, clientCpuUs, serverCpuUs },
            ]),
        ),
      ]),
    ),
    setup: {
      rounds: ROUNDS,
      workloads: all.map(({ name, n, inFlight }) => ({ name, n, inFlight })),
      process: 'the server in a child process; every client in this one, one after another',
    },
  });
  console.log(`wrote ${file}`);
});
