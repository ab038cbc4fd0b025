// The network harness itself: hosts reach each other over their own addresses, a cut link and a
// cut pair really carry nothing until restored, netem really delays, a child's output after a mark
// is seen however much it printed before, and every namespace goes away (stale ones of dead test
// processes too).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestNetwork,
  listNamespaces,
  NETNS_PREFIX,
  ownerPidOf,
  sweepStaleNamespaces,
  type TestNetwork,
} from './netns.js';
import { spawnOnHost, startRelay, type HostProcess } from './netns-process.js';

const ECHO_PORT = 7000;
let network: TestNetwork;
let dir: string;
const children: HostProcess[] = [];

/** One line through the Unix socket → forwarder on host a → echo server on host b; its RTT in ms, or 'timeout'. */
function echo(socketPath: string, timeoutMs: number): Promise<number | 'timeout'> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ path: socketPath });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, timeoutMs);
    socket.on('connect', () => socket.write('ping\n'));
    socket.on('data', (chunk) => {
      if (!chunk.toString().includes('ping')) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(performance.now() - started);
    });
    socket.on('error', () => undefined);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowfleet-netns-'));
  network = await createTestNetwork(['a', 'b']);
  const b = network.host('b');
  const server = spawnOnHost(network, 'b', [
    process.execPath,
    '-e',
    `require('node:net').createServer((s) => s.pipe(s)).listen(${ECHO_PORT}, process.argv[1], () => console.log('echoing'))`,
    b.address,
  ]);
  children.push(server);
  await server.waitForOutput(/echoing/, 'the echo server');
  children.push(
    await startRelay(network, 'a', {
      listen: join(dir, 'a.sock'),
      target: b.address,
      port: ECHO_PORT,
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(children.map((child) => child.stop('SIGKILL')));
  await network?.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe('createTestNetwork', () => {
  it('gives each host its own namespace, address and nothing else', async () => {
    const [a, b] = network.hosts;
    expect(a?.address).toMatch(/^10\.\d+\.\d+\.10$/);
    expect(b?.address).toMatch(/^10\.\d+\.\d+\.11$/);
    const names = await listNamespaces();
    for (const host of network.hosts) expect(names).toContain(host.ns);
    // One route (the test subnet), no default route: a host can reach nothing but the network.
    const routes = (await network.exec('a', 'ip', ['-4', 'route'])).trim().split('\n');
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatch(/^10\.\d+\.\d+\.0\/24 dev eth0 /);
    expect(await echo(join(dir, 'a.sock'), 5_000)).toBeTypeOf('number');
  });

  it('cuts a link and restores it', async () => {
    const socketPath = join(dir, 'a.sock');
    expect(await echo(socketPath, 5_000)).toBeTypeOf('number');
    await network.cut('a');
    expect(await echo(socketPath, 1_000)).toBe('timeout');
    await network.restore('a');
    expect(await echo(socketPath, 5_000)).toBeTypeOf('number');
  });

  it('cuts one pair of hosts only', async () => {
    const socketPath = join(dir, 'a.sock');
    await network.cutBetween('a', 'b');
    expect(await echo(socketPath, 1_000)).toBe('timeout');
    await network.restoreBetween('a', 'b');
    expect(await echo(socketPath, 5_000)).toBeTypeOf('number');
  });

  it('drops packets at random on a lossy link', async () => {
    const b = network.host('b').address;
    const udp = spawnOnHost(network, 'b', [
      process.execPath,
      '-e',
      `const s = require('node:dgram').createSocket('udp4'); s.on('message', (m, r) => s.send(m, r.port, r.address)); s.bind(${ECHO_PORT + 1}, process.argv[1], () => console.log('bound'));`,
      b,
    ]);
    children.push(udp);
    await udp.waitForOutput(/bound/, 'the UDP echo');
    // `count` datagrams from a, 20 ms apart; prints how many came back.
    const answered = async (count: number): Promise<number> => {
      const out = await network.exec('a', process.execPath, [
        '-e',
        `const s = require('node:dgram').createSocket('udp4'); const seen = new Set(); s.on('message', (m) => seen.add(String(m)));
         let i = 0; const t = setInterval(() => { s.send(String(i++), ${ECHO_PORT + 1}, process.argv[1]); if (i === ${count}) { clearInterval(t); setTimeout(() => { console.log(seen.size); process.exit(0); }, 200); } }, 20);`,
        b,
      ]);
      return Number(out.trim());
    };
    expect(await answered(20)).toBe(20);
    // 50 % each way: a round trip survives 1 time in 4.
    await network.setLoss('a', 50);
    const survived = await answered(100);
    await network.clearLoss('a');
    expect(survived).toBeGreaterThan(5);
    expect(survived).toBeLessThan(50);
    expect(await answered(20)).toBe(20);
  });

  it('a relay with a delay holds each chunk delay ± jitter each way', async () => {
    const socketPath = join(dir, 'slow.sock');
    children.push(
      await startRelay(network, 'a', {
        listen: socketPath,
        target: network.host('b').address,
        port: ECHO_PORT,
        delayMs: 200,
        jitterMs: 50,
      }),
    );
    const rtt = await echo(socketPath, 5_000);
    expect(rtt).toBeGreaterThanOrEqual(300);
    expect(rtt).toBeLessThan(1_000);
  });
});

describe('spawnOnHost', () => {
  it('shows what a child printed after a mark, however much it printed before', async () => {
    // More than the 40 kB tail `output()` shows: a mark taken as `output().length` would stop
    // growing there, and nothing printed after it would ever be seen.
    const child = spawnOnHost(network, 'a', [
      process.execPath,
      '-e',
      `process.on('SIGUSR2', () => console.log('after the mark'));
       console.log('x'.repeat(100000));
       console.log('ready');
       setInterval(() => undefined, 1000);`,
    ]);
    children.push(child);
    await child.waitForOutput(/ready/, 'the first 100 kB');
    const mark = child.printed();
    expect(mark).toBeGreaterThan(100_000);
    expect(child.outputSince(mark)).toBe('');
    child.process.kill('SIGUSR2');
    const deadline = Date.now() + 10_000;
    while (!child.outputSince(mark).includes('after the mark')) {
      if (Date.now() > deadline)
        throw new Error(`nothing after the mark: ${child.output().slice(-200)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(child.outputSince(mark)).toBe('after the mark\n');
    await child.stop('SIGKILL');
  });
});

describe('clean-up', () => {
  it('destroy() removes every namespace; a dead process’s leftovers are swept', async () => {
    const other = await createTestNetwork(['x']);
    const ns = other.host('x').ns;
    expect(await listNamespaces()).toContain(ns);
    await other.destroy();
    await other.destroy(); // idempotent
    expect(await listNamespaces()).not.toContain(ns);

    // A namespace named for a process that has exited is stale.
    const gone = spawnSync(process.execPath, ['-e', 'process.pid'], { stdio: 'ignore' }).pid;
    const stale = `${NETNS_PREFIX}${gone}-dead00-hub`;
    expect(ownerPidOf(stale)).toBe(gone);
    execFileSync('ip', ['netns', 'add', stale]);
    expect(await sweepStaleNamespaces()).toBeGreaterThanOrEqual(1);
    expect(await listNamespaces()).not.toContain(stale);
    // Ours (this live process) are kept.
    for (const host of network.hosts) expect(await listNamespaces()).toContain(host.ns);
  });
});
