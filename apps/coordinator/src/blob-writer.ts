import { Worker } from 'node:worker_threads';

/** A durable, create-once write of one small file. */
export interface SmallWrite {
  /** Directory of `target` (created when missing). */
  readonly dir: string;
  /** A fresh path on the same filesystem, written first and removed afterwards. */
  readonly temp: string;
  readonly target: string;
  readonly bytes: Uint8Array;
}

/** What a write did: created `target`, or found it there already (with that file's sha256). */
export type SmallWriteResult =
  | { readonly status: 'created'; readonly sha256: string }
  | { readonly status: 'exists'; readonly sha256: string; readonly storedSha256: string };

interface Reply {
  readonly seq: number;
  readonly result?: SmallWriteResult;
  readonly error?: { readonly message: string; readonly code?: string };
}

// The thread's whole program (CommonJS; node:fs and node:crypto only). One message is one write:
// temp file → fdatasync → link() to the target (fails if it exists: create-once) → unlink temp.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
function write({ dir, temp, target, bytes }) {
  fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(temp, 'wx');
  try {
    let offset = 0;
    while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temp, target);
    return { status: 'created', sha256: sha256(bytes) };
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    return { status: 'exists', sha256: sha256(bytes), storedSha256: sha256(fs.readFileSync(target)) };
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
parentPort.on('message', ({ seq, request }) => {
  try {
    parentPort.postMessage({ seq, result: write(request) });
  } catch (error) {
    parentPort.postMessage({ seq, error: { message: String(error.message), code: error.code } });
  }
});
`;

/** Threads in the pool: concurrent fdatasyncs share journal commits on most filesystems. */
const THREADS = 2;

interface Thread {
  readonly worker: Worker;
  readonly pending: Map<
    number,
    { resolve: (r: SmallWriteResult) => void; reject: (e: Error) => void }
  >;
}

/**
 * Writes small files durably on worker threads. On the event loop each filesystem call of a write
 * (open, write, fdatasync, close, mkdir, link, unlink) is a thread-pool round trip whose hand-offs
 * cost more than the calls; here a whole write is one message, and the blocking calls (a slow
 * disk, a network volume) never touch the event loop. Threads start on first use and do not keep
 * the process alive.
 */
export class BlobWriter {
  readonly #threads: (Thread | undefined)[] = new Array<Thread | undefined>(THREADS);
  #seq = 0;
  #closed = false;

  /**
   * Writes `request.bytes` to `request.target` unless it exists.
   * @throws Error with the filesystem's `code` (ENOSPC, EACCES…), or when the thread died
   */
  write(request: SmallWrite): Promise<SmallWriteResult> {
    if (this.#closed) return Promise.reject(new Error('BlobWriter is closed'));
    const thread = this.#thread();
    const seq = this.#seq++;
    return new Promise((resolve, reject) => {
      thread.pending.set(seq, { resolve, reject });
      thread.worker.ref();
      thread.worker.postMessage({ seq, request });
    });
  }

  /** Stops the threads; writes in flight fail. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads.splice(0, THREADS, ...new Array<undefined>(THREADS));
    await Promise.all(threads.map((thread) => thread?.worker.terminate()));
  }

  /** The thread with the fewest writes in flight (started on first use, replaced if it died). */
  #thread(): Thread {
    let best: Thread | undefined;
    for (let i = 0; i < THREADS; i++) {
      const thread = (this.#threads[i] ??= this.#start(i));
      if (best === undefined || thread.pending.size < best.pending.size) best = thread;
    }
    return best as Thread;
  }

  #start(index: number): Thread {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      name: `flowfleet-blob-writer-${index}`,
    });
    worker.unref();
    const thread: Thread = { worker, pending: new Map() };
    const failAll = (error: Error) => {
      if (this.#threads[index] === thread) this.#threads[index] = undefined;
      for (const { reject } of thread.pending.values()) reject(error);
      thread.pending.clear();
    };
    worker.on('message', ({ seq, result, error }: Reply) => {
      const waiter = thread.pending.get(seq);
      thread.pending.delete(seq);
      if (thread.pending.size === 0) worker.unref();
      if (waiter === undefined) return;
      if (result !== undefined) waiter.resolve(result);
      else
        waiter.reject(
          Object.assign(new Error(error?.message ?? 'write failed'), { code: error?.code }),
        );
    });
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the blob writer thread exited (${code})`)));
    return thread;
  }
}
