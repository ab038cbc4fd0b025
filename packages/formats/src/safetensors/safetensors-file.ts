import { open, type FileHandle } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsTensor } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import {
  parseSafetensorsHeader,
  readHeaderLength,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from './safetensors-header.js';
import { tensorFromBytes } from './tensor-bytes.js';

function ioError(path: string, cause: unknown): FlowfleetError {
  return new FlowfleetError('FMT_FILE_IO', `cannot read safetensors file ${path}`, {
    details: { path },
    cause,
  });
}

/**
 * Bytes that can be read at any position: a file, or an object store's ranged reads (the
 * coordinator's stored results), so a safetensors file is inspected without being held whole.
 */
export interface RandomAccessBytes {
  /** Names the object in error messages. */
  readonly name: string;
  /** The whole object's size in bytes. */
  readonly sizeBytes: number;
  /** Fills `target` from byte `position` on: resolves how many bytes it filled (0 at the end). */
  read(target: Uint8Array, position: number): Promise<number>;
}

function isFileHandle(source: FileHandle | RandomAccessBytes): source is FileHandle {
  return 'fd' in source;
}

/** A FileHandle as RandomAccessBytes (reads straight into the caller's buffer). */
async function fileBytesOf(handle: FileHandle, path: string): Promise<RandomAccessBytes> {
  let sizeBytes: number;
  try {
    sizeBytes = (await handle.stat()).size;
  } catch (cause) {
    throw ioError(path, cause);
  }
  return {
    name: path,
    sizeBytes,
    async read(target, position) {
      try {
        return (await handle.read(target, 0, target.length, position)).bytesRead;
      } catch (cause) {
        throw ioError(path, cause);
      }
    },
  };
}

/** Reads exactly `length` bytes at `position` into a fresh buffer (offset 0, so aligned). */
async function readExactly(
  source: RandomAccessBytes,
  position: number,
  length: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const bytesRead = await source.read(out.subarray(done), position + done);
    if (bytesRead === 0) {
      throw safetensorsInvalid('truncated', `${source.name} ended after ${position + done} bytes`, {
        path: source.name,
      });
    }
    done += bytesRead;
  }
  return out;
}

/**
 * A safetensors file opened for random access: `open` reads only the 8-byte length and the
 * header (validated against the file's size, exactly as `readSafetensors` validates a buffer), and
 * `readTensor` reads one tensor's bytes, so a multi-GB checkpoint can be inspected, or loaded
 * tensor by tensor, without ever being held whole.
 */
export class SafetensorsFileReader {
  /** The validated header: every tensor's dtype, shape and offsets, and the metadata. */
  readonly header: SafetensorsHeader;
  readonly #source: RandomAccessBytes;
  readonly #close: (() => Promise<void>) | undefined;
  #bytesRead: number;
  #closed = false;

  private constructor(
    source: RandomAccessBytes,
    close: (() => Promise<void>) | undefined,
    header: SafetensorsHeader,
    bytesRead: number,
  ) {
    this.#source = source;
    this.#close = close;
    this.header = header;
    this.#bytesRead = bytesRead;
  }

  /**
   * Opens `source` (a path; a FileHandle the caller keeps owning; or any RandomAccessBytes) and
   * reads its header.
   * @throws FMT_FILE_IO when the file cannot be opened, sized or read; FMT_SAFETENSORS_INVALID
   *   when the header or layout is malformed (the handle is closed again if this call opened it);
   *   whatever a RandomAccessBytes' `read` throws
   */
  static async open(
    source: string | FileHandle | RandomAccessBytes,
  ): Promise<SafetensorsFileReader> {
    if (typeof source !== 'string' && !isFileHandle(source)) {
      return SafetensorsFileReader.#openBytes(source, undefined);
    }
    const path = typeof source === 'string' ? source : `fd ${source.fd}`;
    let handle: FileHandle;
    try {
      handle = typeof source === 'string' ? await open(source, 'r') : source;
    } catch (cause) {
      throw ioError(path, cause);
    }
    const close = typeof source === 'string' ? () => handle.close() : undefined;
    try {
      return await SafetensorsFileReader.#openBytes(await fileBytesOf(handle, path), close);
    } catch (error) {
      await close?.();
      throw error;
    }
  }

  static async #openBytes(
    source: RandomAccessBytes,
    close: (() => Promise<void>) | undefined,
  ): Promise<SafetensorsFileReader> {
    const fileBytes = source.sizeBytes;
    const first8 = await readExactly(source, 0, Math.min(8, fileBytes));
    const headerBytes = readHeaderLength(first8, fileBytes);
    const headerJson = await readExactly(source, 8, headerBytes);
    const header = parseSafetensorsHeader(headerJson, fileBytes);
    return new SafetensorsFileReader(source, close, header, first8.length + headerBytes);
  }

  /** Bytes read from the source so far (the 8-byte length and the header included). */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  /**
   * Reads one tensor into its own buffer.
   * @throws FMT_SAFETENSORS_INVALID unknown-tensor, invalid-bool, truncated (the file shrank);
   *   FMT_FILE_IO when the read fails or the reader is closed
   */
  async readTensor(name: string): Promise<SafetensorsTensor> {
    const entry = this.#entry(name);
    const [begin, end] = entry.dataOffsets;
    const raw = await this.#read(begin, end - begin);
    return tensorFromBytes(name, entry.dtype, entry.shape, raw, false);
  }

  /**
   * Reads `lengthBytes` raw (little-endian) bytes of tensor `name` from `offsetBytes` into it: a
   * slice of a large tensor (one frame of a frame stack) without reading the rest.
   * @throws FMT_INVALID_ARGUMENT when the slice is not inside the tensor; otherwise as `readTensor`
   */
  async readTensorBytes(
    name: string,
    offsetBytes: number,
    lengthBytes: number,
  ): Promise<Uint8Array> {
    const [begin, end] = this.#entry(name).dataOffsets;
    const size = end - begin;
    if (
      !Number.isSafeInteger(offsetBytes) ||
      !Number.isSafeInteger(lengthBytes) ||
      offsetBytes < 0 ||
      lengthBytes < 0 ||
      offsetBytes + lengthBytes > size
    ) {
      throw new FlowfleetError(
        'FMT_INVALID_ARGUMENT',
        `bytes [${offsetBytes}, ${offsetBytes + lengthBytes}) are not inside the ${size} bytes of ${name}`,
        { details: { argument: 'offsetBytes', value: offsetBytes, size } },
      );
    }
    return this.#read(begin + offsetBytes, lengthBytes);
  }

  #entry(name: string): SafetensorsEntry {
    const entry = this.header.tensors.get(name);
    if (entry === undefined) {
      throw safetensorsInvalid('unknown-tensor', `${this.#source.name} has no tensor ${name}`, {
        tensor: name,
      });
    }
    return entry;
  }

  async #read(dataOffset: number, length: number): Promise<Uint8Array> {
    if (this.#closed) throw ioError(this.#source.name, new Error('the reader is closed'));
    const raw = await readExactly(this.#source, this.header.dataStart + dataOffset, length);
    this.#bytesRead += length;
    return raw;
  }

  /** Closes the file if `open` opened it (a caller's FileHandle stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#close?.();
  }
}

/**
 * The validated header of the safetensors file at `path`, reading only its first 8 + N bytes.
 * @throws FMT_FILE_IO, FMT_SAFETENSORS_INVALID as `SafetensorsFileReader.open`
 */
export async function readSafetensorsHeader(path: string): Promise<SafetensorsHeader> {
  const reader = await SafetensorsFileReader.open(path);
  await reader.close();
  return reader.header;
}
