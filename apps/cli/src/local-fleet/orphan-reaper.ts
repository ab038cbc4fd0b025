import { spawn, type ChildProcess } from 'node:child_process';

/** How long the reaper waits for the apps to exit on their own before it SIGKILLs them. */
export const REAPER_AWAIT_MS = 30_000;
/** How long a process the reaper terminates gets between SIGTERM and SIGKILL. */
export const REAPER_TERMINATE_MS = 10_000;

// The reaper itself: plain JavaScript run by `node -e` (no loader, ~40 MB), so it starts in tens of
// milliseconds from source and from a build alike. It reads JSON lines from stdin; EOF without a
// `release` line means the CLI died (even by SIGKILL: the kernel closes its end of the pipe). A
// zombie (state Z in /proc) counts as gone: an orphan's new parent may never reap it.
const REAPER_SCRIPT = `
const { readFileSync, rmSync } = require('node:fs');
const [awaitMs, terminateMs] = process.argv.slice(1).map(Number);
const awaited = new Set(), terminated = new Set(), removed = new Set();
let released = false, buffer = '';
const alive = (pid) => {
  try { process.kill(pid, 0); } catch (error) { return error.code === 'EPERM'; }
  try { return !/^\\d+ \\(.*\\) Z/s.test(readFileSync('/proc/' + pid + '/stat', 'utf8')); }
  catch { return true; }
};
const kill = (pid, signal) => { try { process.kill(pid, signal); } catch {} };
const gone = async (pids, ms) => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && [...pids].some(alive)) await new Promise((r) => setTimeout(r, 100));
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  buffer += text;
  for (let at = buffer.indexOf('\\n'); at >= 0; at = buffer.indexOf('\\n')) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    let message;
    try { message = JSON.parse(line); } catch { continue; }
    if (Number.isInteger(message.await)) awaited.add(message.await);
    if (Number.isInteger(message.terminate)) terminated.add(message.terminate);
    if (typeof message.remove === 'string') removed.add(message.remove);
    if (message.release === true) released = true;
  }
});
let reaping = false;
const reap = async () => {
  if (reaping) return;
  reaping = true;
  if (released) process.exit(0);
  await gone(awaited, awaitMs);
  for (const pid of awaited) if (alive(pid)) kill(pid, 'SIGKILL');
  for (const pid of terminated) kill(pid, 'SIGTERM');
  await gone(terminated, terminateMs);
  for (const pid of terminated) if (alive(pid)) kill(pid, 'SIGKILL');
  for (const path of removed) { try { rmSync(path, { recursive: true, force: true }); } catch {} }
  process.exit(0);
};
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
`;

/**
 * Cleans up after a `flowfleet up` that dies without closing its fleet (SIGKILL, OOM): a small
 * detached process that holds a pipe from the CLI and, when the pipe closes without a `release`,
 * waits for the apps (which exit on their own: `FLOWFLEET_EXIT_WITH_PARENT`), SIGKILLs those past
 * {@link REAPER_AWAIT_MS}, then terminates what cannot watch its parent itself (redis-server) and
 * removes the fleet's temp dirs. A clean `close()` releases it first, so it then does nothing.
 */
export class OrphanReaper {
  readonly #child: ChildProcess;
  #released = false;

  private constructor(child: ChildProcess) {
    this.#child = child;
  }

  /** Starts the reaper process (returns at once). */
  static start(options: { awaitMs?: number; terminateMs?: number } = {}): OrphanReaper {
    const child = spawn(
      process.execPath,
      [
        '-e',
        REAPER_SCRIPT,
        String(options.awaitMs ?? REAPER_AWAIT_MS),
        String(options.terminateMs ?? REAPER_TERMINATE_MS),
      ],
      // Its own process group: a Ctrl-C in the terminal reaches only the CLI.
      { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
    );
    // The pipe and the process must not keep the CLI alive once it is done.
    child.unref();
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return new OrphanReaper(child);
  }

  /** The reaper's pid (undefined when it could not be spawned). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** A child that exits by itself when the CLI dies: waited for before anything is terminated. */
  awaitExit(pid: number | undefined): void {
    if (pid !== undefined) this.#send({ await: pid });
  }

  /** A child to SIGTERM (then SIGKILL) once the awaited ones are gone. */
  terminate(pid: number | undefined): void {
    if (pid !== undefined) this.#send({ terminate: pid });
  }

  /** A path to remove last. */
  remove(path: string): void {
    this.#send({ remove: path });
  }

  /** The fleet closed cleanly: the reaper exits without touching anything. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#child.stdin?.end(`${JSON.stringify({ release: true })}\n`);
  }

  #send(message: Record<string, unknown>): void {
    if (this.#released) return;
    this.#child.stdin?.write(`${JSON.stringify(message)}\n`);
  }
}
