import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { FlowfleetError } from '@flowfleet/errors';
import type { ResultFile } from '@flowfleet/protocol';
import type { ByteRange } from '@flowfleet/protocol/http-edge';
import {
  BlobDigestTaker,
  digestStoredBlob,
  readBlobDigest,
  writeBlobDigest,
  type BlobDigest,
} from './blob-digest.js';
import { hashFile, isErrno, removeFile, syncDirectory, whileStoreHasSpace } from './store-files.js';

/** Bytes to store: a request stream, or chunks already in memory. */
export type ByteSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** A stored object's identity. */
export interface StoredObject {
  readonly sha256: string;
  readonly sizeBytes: number;
}

/** The outcome of an idempotent result write. */
export interface ResultWrite extends StoredObject {
  /** `created` on the first write, `unchanged` when the same bytes were already there. */
  readonly status: 'created' | 'unchanged';
}

/** An opened object: its size (for Content-Length) and a stream of its bytes. */
export interface OpenedObject {
  /** Bytes the stream gives (the range's length when one was asked for). */
  readonly sizeBytes: number;
  /** The whole object's size. */
  readonly totalBytes: number;
  readonly stream: Readable;
}

/** A stored blob or job's results, as retention sees it. */
export interface StoredEntry {
  /** The blob's sha256, or the job id. */
  readonly name: string;
  readonly sizeBytes: number;
  /** When it was last written (epoch ms). */
  readonly storedAtMs: number;
}

/** A byte range `[start, end]` (inclusive, as HTTP ranges are) inside an object. */
export type { ByteRange };

/**
 * Where blobs (content-addressed) and job results (by job id) live. The filesystem store is the
 * default; the interface is what an S3-compatible store would implement.
 */
export interface BlobStore {
  /** Creates what the store needs (directories); idempotent. */
  init(): Promise<void>;
  /**
   * Stores `source` under its sha256.
   * @throws FlowfleetError `API_BLOB_TOO_LARGE` past `maxBytes`, `API_BLOB_STORE_FULL` when the
   *   store has no space left (nothing is kept either way).
   */
  putBlob(source: ByteSource, maxBytes: number): Promise<StoredObject>;
  /** The size of a blob, or undefined when absent. */
  statBlob(sha256: string): Promise<StoredObject | undefined>;
  /**
   * Opens a blob (or `range` of it) for reading, or undefined when absent.
   * @throws FlowfleetError API_RANGE_NOT_SATISFIABLE when `range` is not inside the blob
   */
  openBlob(sha256: string, range?: ByteRange): Promise<OpenedObject | undefined>;
  /**
   * What the blob holds: taken from its bytes as it was uploaded (every tensor's span and sha256
   * for a safetensors file); for a blob stored without one, taken now from the stored bytes and
   * kept. Undefined when the blob is absent.
   * @throws FlowfleetError API_BLOB_CORRUPT when the stored bytes no longer hash to the name
   */
  blobDigest(sha256: string): Promise<BlobDigest | undefined>;
  /**
   * Stores a job's result file once; the same bytes again are a no-op.
   * @throws FlowfleetError `API_RESULT_CONFLICT` when different bytes are already stored,
   * `API_BLOB_TOO_LARGE` past `maxBytes`, `API_BLOB_STORE_FULL` when the store has no space left
   * (nothing partial is kept).
   */
  putResult(
    jobId: string,
    file: ResultFile,
    source: ByteSource,
    maxBytes: number,
  ): Promise<ResultWrite>;
  /**
   * Opens a job's result file (or `range` of it: the frame route reads one frame), or undefined
   * when absent.
   * @throws FlowfleetError API_RANGE_NOT_SATISFIABLE when `range` is not inside the file
   */
  openResult(jobId: string, file: ResultFile, range?: ByteRange): Promise<OpenedObject | undefined>;
  /** Every stored blob (for retention; in no particular order). */
  listBlobs(): AsyncIterable<StoredEntry>;
  /** Deletes a blob and its digest; an absent one is fine. */
  deleteBlob(sha256: string): Promise<void>;
  /** Every job with stored results, its files' total size and the last write (for retention). */
  listResults(): AsyncIterable<StoredEntry>;
  /** Deletes a job's result files; absent ones are fine. */
  deleteResult(jobId: string): Promise<void>;
  /** Releases what the store holds (threads, connections). Idempotent. */
  close(): Promise<void>;
}

interface TempFile extends StoredObject {
  readonly path: string;
  readonly digest?: BlobDigest;
}

/**
 * A BlobStore in one directory: `sha256/<hex>` for blobs, `digests/<hex>.json` for what each
 * holds, `results/<jobId>/<file>` for results, `tmp/` for uploads in flight (same filesystem,
 * so publishing is an atomic rename or link).
 */
export class FsBlobStore implements BlobStore {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  /** Nothing to release: every write opens and closes its own files. */
  async close(): Promise<void> {}

  async init(): Promise<void> {
    for (const dir of ['sha256', 'digests', 'results', 'tmp']) {
      await mkdir(join(this.#root, dir), { recursive: true });
    }
  }

  putBlob(source: ByteSource, maxBytes: number): Promise<StoredObject> {
    return whileStoreHasSpace('a blob', () => this.#putBlob(source, maxBytes));
  }

  async #putBlob(source: ByteSource, maxBytes: number): Promise<StoredObject> {
    const temp = await this.#receive(source, maxBytes, true);
    try {
      // The digest first: a blob under its name always has one (a digest without its blob, after
      // a crash between the two, is harmless: the next upload of those bytes writes both again).
      if (temp.digest !== undefined) await this.#writeDigest(temp.digest);
      // Same content, same name: renaming over an existing copy is harmless and atomic.
      await rename(temp.path, this.#blobPath(temp.sha256));
    } catch (error) {
      await removeFile(temp.path);
      throw error;
    }
    // The name is durable only once its directory is: a sync may name this blob next.
    await syncDirectory(join(this.#root, 'sha256'));
    return { sha256: temp.sha256, sizeBytes: temp.sizeBytes };
  }

  async statBlob(sha256: string): Promise<StoredObject | undefined> {
    const size = await this.#size(this.#blobPath(sha256));
    return size === undefined ? undefined : { sha256, sizeBytes: size };
  }

  openBlob(sha256: string, range?: ByteRange): Promise<OpenedObject | undefined> {
    return this.#open(this.#blobPath(sha256), range);
  }

  blobDigest(sha256: string): Promise<BlobDigest | undefined> {
    return whileStoreHasSpace(`the digest of blob ${sha256}`, () => this.#blobDigest(sha256));
  }

  async #blobDigest(sha256: string): Promise<BlobDigest | undefined> {
    const path = this.#blobPath(sha256);
    if ((await this.#size(path)) === undefined) return undefined;
    const kept = await readBlobDigest(this.#digestPath(sha256), sha256);
    if (kept !== undefined) return kept;
    const digest = await digestStoredBlob(path, sha256);
    await this.#writeDigest(digest);
    return digest;
  }

  putResult(
    jobId: string,
    file: ResultFile,
    source: ByteSource,
    maxBytes: number,
  ): Promise<ResultWrite> {
    return whileStoreHasSpace(`the ${file} of job ${jobId}`, () =>
      this.#putResult(jobId, file, source, maxBytes),
    );
  }

  async #putResult(
    jobId: string,
    file: ResultFile,
    source: ByteSource,
    maxBytes: number,
  ): Promise<ResultWrite> {
    const temp = await this.#receive(source, maxBytes);
    const jobDir = join(this.#root, 'results', jobId);
    const target = this.#resultPath(jobId, file);
    try {
      try {
        await mkdir(jobDir);
        await syncDirectory(join(this.#root, 'results'));
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw error;
      }
      try {
        // link() fails when the target exists, so exactly one writer ever creates a result.
        await link(temp.path, target);
        // Before the worker is told "created" (and BullMQ says completed): after a power loss the
        // file's data (fdatasync in #receive) must not come back without its name.
        await syncDirectory(jobDir);
        return { sha256: temp.sha256, sizeBytes: temp.sizeBytes, status: 'created' };
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw error;
      }
      const existing = await hashFile(target);
      if (existing.sha256 !== temp.sha256) {
        throw new FlowfleetError(
          'API_RESULT_CONFLICT',
          `job ${jobId} already has a different ${file}; results are written once`,
          { details: { jobId, file, storedSha256: existing.sha256, sentSha256: temp.sha256 } },
        );
      }
      return { sha256: temp.sha256, sizeBytes: temp.sizeBytes, status: 'unchanged' };
    } finally {
      await removeFile(temp.path);
    }
  }

  openResult(
    jobId: string,
    file: ResultFile,
    range?: ByteRange,
  ): Promise<OpenedObject | undefined> {
    return this.#open(this.#resultPath(jobId, file), range);
  }

  async *listBlobs(): AsyncIterable<StoredEntry> {
    for (const name of await readdir(join(this.#root, 'sha256'))) {
      const stats = await this.#stat(this.#blobPath(name));
      if (stats !== undefined) yield { name, sizeBytes: stats.size, storedAtMs: stats.mtimeMs };
    }
  }

  async deleteBlob(sha256: string): Promise<void> {
    // The blob first: a digest without its blob is harmless (see putBlob), the reverse is not.
    await removeFile(this.#blobPath(sha256));
    await removeFile(this.#digestPath(sha256));
  }

  async *listResults(): AsyncIterable<StoredEntry> {
    for (const jobId of await readdir(join(this.#root, 'results'))) {
      const dir = join(this.#root, 'results', jobId);
      const stats = await this.#stat(dir);
      if (stats === undefined) continue;
      let sizeBytes = 0;
      let storedAtMs = stats.mtimeMs;
      for (const file of await readdir(dir).catch(() => [])) {
        const fileStats = await this.#stat(join(dir, file));
        sizeBytes += fileStats?.size ?? 0;
        storedAtMs = Math.max(storedAtMs, fileStats?.mtimeMs ?? 0);
      }
      yield { name: jobId, sizeBytes, storedAtMs };
    }
  }

  async deleteResult(jobId: string): Promise<void> {
    await rm(join(this.#root, 'results', jobId), { recursive: true, force: true });
  }

  #blobPath(sha256: string): string {
    return join(this.#root, 'sha256', sha256);
  }

  #digestPath(sha256: string): string {
    return join(this.#root, 'digests', `${sha256}.json`);
  }

  #writeDigest(digest: BlobDigest): Promise<void> {
    return writeBlobDigest(
      this.#digestPath(digest.sha256),
      join(this.#root, 'tmp', `${randomUUID()}.digest`),
      digest,
    );
  }

  #resultPath(jobId: string, file: ResultFile): string {
    return join(this.#root, 'results', jobId, file);
  }

  async #size(path: string): Promise<number | undefined> {
    return (await this.#stat(path))?.size;
  }

  async #stat(path: string): Promise<Stats | undefined> {
    try {
      return await stat(path);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    }
  }

  async #open(path: string, range?: ByteRange): Promise<OpenedObject | undefined> {
    const size = await this.#size(path);
    if (size === undefined) return undefined;
    if (range === undefined)
      return { sizeBytes: size, totalBytes: size, stream: createReadStream(path) };
    const { start, end } = range;
    if (
      !Number.isSafeInteger(start) ||
      !Number.isSafeInteger(end) ||
      start < 0 ||
      end < start ||
      end >= size
    ) {
      throw new FlowfleetError(
        'API_RANGE_NOT_SATISFIABLE',
        `bytes ${start}-${end} are not inside the ${size} bytes of the object`,
        { details: { start, end, sizeBytes: size } },
      );
    }
    return {
      sizeBytes: end - start + 1,
      totalBytes: size,
      stream: createReadStream(path, { start, end }),
    };
  }

  /**
   * Streams `source` into a temp file while hashing it, enforcing `maxBytes` as it goes; the data
   * is on disk (fdatasync) before the caller publishes it under its final name.
   */
  async #receive(source: ByteSource, maxBytes: number, digest = false): Promise<TempFile> {
    const path = join(this.#root, 'tmp', `${randomUUID()}.part`);
    const hash = createHash('sha256');
    const taker = digest ? new BlobDigestTaker() : undefined;
    const handle = await open(path, 'wx');
    let sizeBytes = 0;
    try {
      for await (const chunk of source) {
        sizeBytes += chunk.byteLength;
        if (sizeBytes > maxBytes) {
          throw new FlowfleetError(
            'API_BLOB_TOO_LARGE',
            `upload exceeds the limit of ${maxBytes} bytes`,
            { details: { maxBytes } },
          );
        }
        hash.update(chunk);
        taker?.update(chunk);
        await handle.write(chunk);
      }
      await handle.datasync();
    } catch (error) {
      await handle.close();
      await removeFile(path);
      throw error;
    }
    await handle.close();
    const sha256 = hash.digest('hex');
    return {
      path,
      sha256,
      sizeBytes,
      ...(taker === undefined ? {} : { digest: taker.finish(sha256, sizeBytes) }),
    };
  }
}
