import { open, type FileHandle } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsTensor } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import {
  parseSafetensorsHeader,
  readHeaderLength,
  type SafetensorsHeader,
} from './safetensors-header.js';
import { tensorFromBytes } from './tensor-bytes.js';

function ioError(path: string, cause: unknown): FlowfleetError {
  return new FlowfleetError('FMT_FILE_IO', `cannot read safetensors file ${path}`, {
    details: { path },
    cause,
  });
}

/** Reads exactly `length` bytes at `position` into a fresh buffer (offset 0, so aligned). */
async function readExactly(
  handle: FileHandle,
  path: string,
  position: number,
  length: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(out, done, length - done, position + done));
    } catch (cause) {
      throw ioError(path, cause);
    }
    if (bytesRead === 0) {
      throw safetensorsInvalid('truncated', `${path} ended after ${position + done} bytes`, {
        path,
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
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #ownsHandle: boolean;
  #closed = false;

  private constructor(
    handle: FileHandle,
    path: string,
    ownsHandle: boolean,
    header: SafetensorsHeader,
  ) {
    this.#handle = handle;
    this.#path = path;
    this.#ownsHandle = ownsHandle;
    this.header = header;
  }

  /**
   * Opens `source` (a path, or a FileHandle the caller keeps owning) and reads its header.
   * @throws FMT_FILE_IO when the file cannot be opened, sized or read; FMT_SAFETENSORS_INVALID
   *   when the header or layout is malformed (the handle is closed again if this call opened it)
   */
  static async open(source: string | FileHandle): Promise<SafetensorsFileReader> {
    const path = typeof source === 'string' ? source : `fd ${source.fd}`;
    let handle: FileHandle;
    try {
      handle = typeof source === 'string' ? await open(source, 'r') : source;
    } catch (cause) {
      throw ioError(path, cause);
    }
    const ownsHandle = typeof source === 'string';
    try {
      let fileBytes: number;
      try {
        fileBytes = (await handle.stat()).size;
      } catch (cause) {
        throw ioError(path, cause);
      }
      const first8 = await readExactly(handle, path, 0, Math.min(8, fileBytes));
      const headerBytes = readHeaderLength(first8, fileBytes);
      const headerJson = await readExactly(handle, path, 8, headerBytes);
      const header = parseSafetensorsHeader(headerJson, fileBytes);
      return new SafetensorsFileReader(handle, path, ownsHandle, header);
    } catch (error) {
      if (ownsHandle) await handle.close();
      throw error;
    }
  }

  /**
   * Reads one tensor into its own buffer.
   * @throws FMT_SAFETENSORS_INVALID unknown-tensor, invalid-bool, truncated (the file shrank);
   *   FMT_FILE_IO when the read fails or the reader is closed
   */
  async readTensor(name: string): Promise<SafetensorsTensor> {
    const entry = this.header.tensors.get(name);
    if (entry === undefined) {
      throw safetensorsInvalid('unknown-tensor', `${this.#path} has no tensor ${name}`, {
        tensor: name,
      });
    }
    if (this.#closed) throw ioError(this.#path, new Error('the reader is closed'));
    const [begin, end] = entry.dataOffsets;
    const raw = await readExactly(
      this.#handle,
      this.#path,
      this.header.dataStart + begin,
      end - begin,
    );
    return tensorFromBytes(name, entry.dtype, entry.shape, raw, false);
  }

  /** Closes the file if `open` opened it (a caller's FileHandle stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsHandle) await this.#handle.close();
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
