// A throwaway redis-server for the bench scripts (nothing imports from test/, so this is the
// benches' own small launcher): a free port, no persistence, `noeviction` (the coordinator refuses
// anything else), its own temp dir, and a synchronous SIGKILL on process exit as the last resort.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A running redis-server child. */
export interface BenchRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number;
  /** `redis-server --version` of the binary that runs. */
  readonly version: string;
  /** SIGTERM, SIGKILL after 3 s, temp dir removed. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('close', () => resolve()));
}

async function waitForPing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited at start:\n${output()}`);
    const probe = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server did not answer PING within 10 s:\n${output()}`);
}

/**
 * Starts `redis-server` on a free port and resolves once it answers PING; `extraArgs` go after
 * the defaults (e.g. `['--maxclients', '20000']`).
 * @throws Error when redis-server is not on PATH or does not come up
 */
export async function startBenchRedis(extraArgs: readonly string[] = []): Promise<BenchRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'flowfleet-bench-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      HOST,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      '',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(
        new Error(
          `cannot run redis-server (${error.message}): install it (apt-get install redis-server)`,
        ),
      ),
    ),
  );
  // Last resort when the script dies without running its teardown.
  const killOnExit = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  const url = `redis://${HOST}:${port}`;
  try {
    await Promise.race([waitForPing(url, child, () => output), spawnError]);
  } catch (error) {
    child.kill('SIGKILL');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', killOnExit);
    throw error;
  }
  const version = /version=([\d.]+)/.exec(output)?.[1] ?? 'unknown';
  let stopped: Promise<void> | undefined;
  return {
    url,
    pid: child.pid ?? -1,
    version,
    stop() {
      stopped ??= (async () => {
        const hard = setTimeout(() => child.kill('SIGKILL'), 3_000);
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited(child);
        clearTimeout(hard);
        process.off('exit', killOnExit);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
