import { coordinatorKeys, FleetReader, READ_DUTY_FACTOR } from '@flowfleet/coordinator';
import {
  fleetKeys,
  manifestDigestOf,
  type WorkerHeartbeat,
  type WorkerManifest,
} from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';
import { fakeManifest, waitFor } from './fixture.js';

let server: RedisServer;
let redis: Redis;
let prefix: string;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});
beforeEach((context) => {
  prefix = uniquePrefix(context.task.name);
});

/** Writes what a worker writes: the manifest text and a heartbeat naming `digest`. */
async function write(
  manifest: WorkerManifest,
  beat: Partial<WorkerHeartbeat> | null,
  writeManifest = true,
): Promise<void> {
  const keys = fleetKeys(prefix);
  const multi = redis.multi().sadd(keys.workers, manifest.workerId);
  if (writeManifest) multi.set(keys.worker(manifest.workerId), JSON.stringify(manifest));
  if (beat !== null) {
    const heartbeat = {
      workerId: manifest.workerId,
      at: new Date().toISOString(),
      activeJobs: 0,
      lanes: [],
      ...beat,
    };
    multi.set(keys.heartbeat(manifest.workerId), JSON.stringify(heartbeat), 'PX', 60_000);
  }
  await multi.exec();
}

function reader(options: { maxAgeMs?: number; now?: () => number } = {}): FleetReader {
  return new FleetReader({
    redis,
    keys: coordinatorKeys(prefix),
    logger: pino({ level: 'silent' }),
    deadWorkerRetentionMs: 60_000,
    ...options,
  });
}

const digestOf = (manifest: WorkerManifest) => manifestDigestOf(JSON.stringify(manifest));

describe('FleetReader', () => {
  it('re-reads a manifest only when the heartbeat names a different digest', async () => {
    const v1 = fakeManifest('w1', { weights: { dit: 1 } });
    const v2 = fakeManifest('w1', { weights: { dit: 2 } });
    await write(v1, { manifestDigest: digestOf(v1) });
    const fleet = reader();
    expect((await fleet.read())[0]?.manifest.weights).toEqual({ dit: 1 });

    // The manifest is rewritten but the heartbeat still names the old one: the held copy stands.
    await write(v2, { manifestDigest: digestOf(v1) });
    expect((await fleet.read())[0]?.manifest.weights).toEqual({ dit: 1 });

    // The next beat names the new manifest: it is read.
    await write(v2, { manifestDigest: digestOf(v2) }, false);
    expect((await fleet.read())[0]?.manifest.weights).toEqual({ dit: 2 });
  });

  it('reads the manifest on every read for a heartbeat without a digest (an older worker)', async () => {
    const v1 = fakeManifest('w1', { weights: { dit: 1 } });
    await write(v1, {});
    const fleet = reader();
    expect((await fleet.read())[0]?.manifest.weights).toEqual({ dit: 1 });
    await write(fakeManifest('w1', { weights: { dit: 2 } }), {});
    expect((await fleet.read())[0]?.manifest.weights).toEqual({ dit: 2 });
  });

  it('shows a worker dead once its heartbeat is gone, with the manifest it held', async () => {
    const v1 = fakeManifest('w1');
    await write(v1, { manifestDigest: digestOf(v1), activeJobs: 3 });
    const fleet = reader();
    expect(await fleet.read()).toMatchObject([{ alive: true, heartbeat: { activeJobs: 3 } }]);
    await redis.del(fleetKeys(prefix).heartbeat('w1'));
    const [view] = await fleet.read();
    expect(view).toMatchObject({ workerId: 'w1', alive: false });
    expect(view?.heartbeat).toBeUndefined();
  });

  it('answers workers() from one read for maxAgeMs, then reads again', async () => {
    let now = 1_000;
    const fleet = reader({ maxAgeMs: 500, now: () => now });
    const a = fakeManifest('a');
    await write(a, { manifestDigest: digestOf(a) });
    const first = await fleet.workers();
    expect(first.map((view) => view.workerId)).toEqual(['a']);
    const b = fakeManifest('b');
    await write(b, { manifestDigest: digestOf(b) });
    now += 499;
    expect(await fleet.workers()).toBe(first);
    now += 1;
    expect((await fleet.workers()).map((view) => view.workerId)).toEqual(['a', 'b']);
  });

  it('starts the next read in the background once the last is half maxAgeMs old', async () => {
    let now = 1_000;
    const fleet = reader({ maxAgeMs: 500, now: () => now });
    const a = fakeManifest('a');
    await write(a, { manifestDigest: digestOf(a) });
    const first = await fleet.workers();
    const b = fakeManifest('b');
    await write(b, { manifestDigest: digestOf(b) });
    // Half-way: the caller gets the last read at once, and a read starts behind it; the clock
    // stays put, so only that background read can bring 'b' in.
    now += 250;
    expect(await fleet.workers()).toBe(first);
    await waitFor(async () => (await fleet.workers()).length === 2, 'the background read');
    expect((await fleet.workers()).map((view) => view.workerId)).toEqual(['a', 'b']);
  });

  it('keeps a read that took long for READ_DUTY_FACTOR times its duration', async () => {
    let now = 1_000;
    let readCostMs = 100;
    // While `readCostMs` > 0 the clock moves that much whenever the reader looks at it.
    const fleet = reader({ maxAgeMs: 500, now: () => (now += readCostMs) - readCostMs });
    const a = fakeManifest('a');
    await write(a, { manifestDigest: digestOf(a) });
    const first = await fleet.workers(); // read at 1 000, taking ≥ 100 ms
    const keepMs = fleet.maxAgeMs();
    expect(keepMs).toBeGreaterThanOrEqual(READ_DUTY_FACTOR * 100);
    readCostMs = 0;
    const b = fakeManifest('b');
    await write(b, { manifestDigest: digestOf(b) });
    // Far older than maxAgeMs, younger than half the kept age: the same read answers.
    now = 1_000 + keepMs / 2 - 1;
    expect(await fleet.workers()).toBe(first);
    // At the kept age: a new read (which took no time, so the kept age is maxAgeMs again).
    now = 1_000 + keepMs;
    expect((await fleet.workers()).map((view) => view.workerId)).toEqual(['a', 'b']);
    expect(fleet.maxAgeMs()).toBe(500);
  });

  it('stamps a death once and clears the stamp when the worker returns', async () => {
    let now = 10_000;
    const keys = coordinatorKeys(prefix);
    const fleet = reader({ maxAgeMs: 0, now: () => now });
    const a = fakeManifest('a');
    await write(a, null);
    await fleet.workers();
    expect(await redis.hget(keys.deadWorkers, 'a')).toBe('10000');
    now += 1_000;
    await fleet.workers();
    expect(await redis.hget(keys.deadWorkers, 'a')).toBe('10000');
    await write(a, { manifestDigest: digestOf(a) }, false);
    await fleet.workers();
    expect(await redis.hget(keys.deadWorkers, 'a')).toBeNull();
  });
});
