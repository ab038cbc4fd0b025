// The local fleet of the device kit: redis-server, the coordinator and two workers
// (FLOWFLEET_DEVICE=webgpu and =cpu) as processes — the bundled apps of the kit (`appsDir`), or
// the sources through tsx — and one rollout group on each device, timed enqueue → completed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { within } from '@flowfleet/platform';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'device-kit-token-0123456789abcdef';

/** What `runFleetGroups` needs. */
export interface FleetGroupOptions {
  /** Where coordinator.js and worker.js are (the kit); undefined: the sources through tsx. */
  readonly appsDir: string | undefined;
  readonly redisServer: string;
  readonly group: number;
  readonly steps: number;
  readonly shape: { readonly frames: number; readonly height: number; readonly width: number };
}

/** One device's group, or why it did not run. */
export type FleetGroupResult = Record<string, unknown>;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function app(
  options: FleetGroupOptions,
  name: 'coordinator' | 'worker',
  env: Record<string, string>,
) {
  const [command, args] =
    options.appsDir === undefined
      ? [
          process.execPath,
          ['--conditions=@flowfleet/source', '--import', 'tsx', `apps/${name}/src/main.ts`],
        ]
      : [process.execPath, [join(options.appsDir, `${name}.js`)]];
  let output = '';
  const child = spawn(command, args, {
    cwd: options.appsDir ?? ROOT,
    env: { ...process.env, FLOWFLEET_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function until<T>(check: () => Promise<T | undefined>, what: string, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts the local fleet, runs one group on webgpu and one on cpu, stops everything. */
export async function runFleetGroups(options: FleetGroupOptions): Promise<FleetGroupResult> {
  const children: ChildProcess[] = [];
  const blobDir = mkdtempSync(join(tmpdir(), 'flowfleet-device-kit-'));
  const logs: Record<string, () => string> = {};
  try {
    const redisPort = await freePort();
    const redis = spawn(
      options.redisServer,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    children.push(redis);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const common = {
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      FLOWFLEET_WORKER_TOKEN: TOKEN,
    };
    const coordinator = app(options, 'coordinator', {
      ...common,
      FLOWFLEET_PORT: String(port),
      FLOWFLEET_TRAINER_TOKEN: TOKEN.replace('device', 'trainr'),
      FLOWFLEET_VIEWER_TOKEN: TOKEN.replace('device', 'viewer'),
      FLOWFLEET_BLOB_DIR: blobDir,
      FLOWFLEET_MAX_LATENT_ELEMENTS: String(1 << 30),
    });
    children.push(coordinator.child);
    logs['coordinator'] = coordinator.output;
    const trainer = { authorization: `Bearer ${TOKEN.replace('device', 'trainr')}` };
    await until(
      async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined),
      'the coordinator',
      60_000,
    );
    for (const device of ['webgpu', 'cpu'] as const) {
      const worker = app(options, 'worker', {
        ...common,
        FLOWFLEET_COORDINATOR_URL: url,
        FLOWFLEET_DEVICE: device,
        FLOWFLEET_WORKER_ID: `kit-${device}`,
        FLOWFLEET_PEER_PORT: 'off',
      });
      children.push(worker.child);
      logs[device] = worker.output;
    }
    await until(
      async () => {
        for (const [name, child] of children.entries()) {
          if (child.exitCode !== null) throw new Error(`process ${name} exited`);
        }
        const fleet = (await (await fetch(`${url}/v1/fleet`, { headers: trainer })).json()) as {
          workers: { alive: boolean }[];
        };
        return fleet.workers.filter((w) => w.alive).length === 2 ? true : undefined;
      },
      'both workers',
      180_000,
    );
    const result: FleetGroupResult = {};
    const logProbs: Record<string, number[]> = {};
    for (const device of ['webgpu', 'cpu'] as const) {
      const body = {
        model: 'wan21-mini',
        prompt: 'a red fox running through fresh snow',
        seeds: Array.from({ length: options.group }, (_, i) => 1000 + i),
        steps: options.steps,
        shape: options.shape,
        constraints: { devices: [device] },
      };
      const started = performance.now();
      const response = await fetch(`${url}/v1/rollouts`, {
        method: 'POST',
        headers: { ...trainer, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const { id } = (await response.json()) as { id: string };
      const status = await until(
        async () => {
          const s = (await (
            await fetch(`${url}/v1/rollouts/${id}`, { headers: trainer })
          ).json()) as {
            status: string;
            summary?: { timings: unknown; logProbs: number[][] | null; platform: unknown };
            error?: unknown;
          };
          if (s.status === 'failed') throw new Error(`rollout failed: ${JSON.stringify(s.error)}`);
          return s.status === 'completed' ? s : undefined;
        },
        `the ${device} rollout group`,
        1_800_000,
      );
      result[device] = {
        wallMs: Math.round(performance.now() - started),
        platform: status.summary?.platform,
        timings: status.summary?.timings,
        request: { group: options.group, steps: options.steps, shape: options.shape },
      };
      logProbs[device] = (status.summary?.logProbs ?? []).flat();
    }
    const parity = within(
      Float64Array.from(logProbs['webgpu'] ?? []),
      Float64Array.from(logProbs['cpu'] ?? []),
      { rtol: 0, atol: 0 },
    );
    result['logProbsWebgpuVsCpu'] = { maxAbs: parity.maxAbs, maxRel: parity.maxRel };
    return result;
  } catch (error) {
    return {
      error: (error as Error).message,
      logs: Object.fromEntries(Object.entries(logs).map(([name, read]) => [name, read()])),
    };
  } finally {
    // Workers first, then the coordinator, then Redis; each gets 10 s to exit on SIGTERM.
    for (const child of children.reverse()) await stop(child);
    rmSync(blobDir, { recursive: true, force: true });
  }
}
