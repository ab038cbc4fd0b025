import { open, rm, type FileHandle } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsTensor } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import {
  safetensorsLayout,
  type SafetensorsEntrySpec,
  type SafetensorsLayout,
} from './safetensors-layout.js';
import { bytesOfTensor } from './tensor-bytes.js';

function ioError(path: string, cause: unknown): FlowfleetError {
  return new FlowfleetError('FMT_FILE_IO', `cannot write safetensors file ${path}`, {
    details: { path },
    cause,
  });
}

/**
 * Writes one safetensors file tensor by tensor, so a multi-GB checkpoint is never held whole:
 * the tensors are declared up front (`create` writes the header of the codec's one layout,
 * byte-identical to `writeSafetensors` of the same tensors), then each `write` puts one tensor's
 * bytes at its slot, in any order. `close` refuses a file with a tensor never written and deletes
 * it; `abort` deletes it too.
 */
export class SafetensorsFileWriter {
  readonly path: string;
  readonly layout: SafetensorsLayout;
  readonly #handle: FileHandle;
  readonly #written = new Set<string>();
  #closed = false;

  private constructor(path: string, layout: SafetensorsLayout, handle: FileHandle) {
    this.path = path;
    this.layout = layout;
    this.#handle = handle;
  }

  /**
   * Creates (or truncates) `path` and writes the header for `entries`.
   * @throws FMT_SAFETENSORS_INVALID as `safetensorsLayout`; FMT_FILE_IO
   */
  static async create(
    path: string,
    entries: readonly SafetensorsEntrySpec[],
    metadata: Readonly<Record<string, string>> = {},
  ): Promise<SafetensorsFileWriter> {
    const layout = safetensorsLayout(entries, metadata);
    let handle: FileHandle;
    try {
      handle = await open(path, 'w');
    } catch (cause) {
      throw ioError(path, cause);
    }
    const writer = new SafetensorsFileWriter(path, layout, handle);
    await writer.#put(layout.head, 0);
    return writer;
  }

  /** Tensors declared but not written yet. */
  get pending(): string[] {
    return [...this.layout.slots.keys()].filter((name) => !this.#written.has(name));
  }

  /**
   * Writes the values of the declared tensor `name`.
   * @throws FMT_SAFETENSORS_INVALID unknown-tensor (not declared), duplicate-key (written
   *   before), size-mismatch (dtype or shape other than declared), and `bytesOfTensor`'s reasons;
   *   FMT_FILE_IO
   */
  async write(name: string, tensor: SafetensorsTensor): Promise<void> {
    const slot = this.layout.slots.get(name);
    const facts = { tensor: name };
    if (slot === undefined) {
      throw safetensorsInvalid('unknown-tensor', `${this.path} declares no tensor ${name}`, facts);
    }
    if (this.#written.has(name)) {
      throw safetensorsInvalid('duplicate-key', `tensor ${name} was already written`, facts);
    }
    const sameShape =
      tensor.shape.length === slot.shape.length &&
      tensor.shape.every((d, i) => d === slot.shape[i]);
    if (tensor.dtype !== slot.dtype || !sameShape) {
      throw safetensorsInvalid(
        'size-mismatch',
        `tensor ${name}: ${tensor.dtype} [${tensor.shape.join(', ')}], declared ${slot.dtype} [${slot.shape.join(', ')}]`,
        facts,
      );
    }
    const bytes = bytesOfTensor(name, tensor);
    this.#written.add(name);
    await this.#put(bytes, slot.fileOffset);
  }

  /**
   * Closes the file once every declared tensor is written.
   * @throws FMT_SAFETENSORS_INVALID truncated (listing the tensors never written; the file is
   *   deleted); FMT_FILE_IO
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    const pending = this.pending;
    if (pending.length > 0) {
      await this.abort();
      throw safetensorsInvalid(
        'truncated',
        `${this.path}: ${pending.length} declared tensors were never written (${pending.slice(0, 3).join(', ')})`,
        { path: this.path, pending },
      );
    }
    this.#closed = true;
    try {
      await this.#handle.close();
    } catch (cause) {
      throw ioError(this.path, cause);
    }
  }

  /** Closes and deletes the file (idempotent; a closed, complete file is left alone). */
  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#handle.close();
    } finally {
      await rm(this.path, { force: true });
    }
  }

  async #put(bytes: Uint8Array, position: number): Promise<void> {
    if (this.#closed) throw ioError(this.path, new Error('the writer is closed'));
    let done = 0;
    while (done < bytes.length) {
      let bytesWritten: number;
      try {
        ({ bytesWritten } = await this.#handle.write(
          bytes,
          done,
          bytes.length - done,
          position + done,
        ));
      } catch (cause) {
        throw ioError(this.path, cause);
      }
      done += bytesWritten;
    }
  }
}
