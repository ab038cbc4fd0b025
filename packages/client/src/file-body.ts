import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import type { StreamedBody } from './wire.js';

/** A streamed body that hashes what it reads (the upload's own bytes, checked against the answer). */
export interface HashedBody extends StreamedBody {
  /** The sha256 (hex) and length of the bytes the last read that reached its end gave. */
  readBack(): { readonly sha256: string; readonly sizeBytes: number } | undefined;
}

/**
 * A file as an upload body read while it is sent, one chunk in memory at a time — so a file of
 * any size (a 5.7 GB single-file checkpoint, past `readFile`'s 2 GiB) can be uploaded.
 * @throws FlowfleetError FMT_FILE_IO when the file cannot be read (up front, or while it is sent)
 */
export async function fileBody(path: string): Promise<HashedBody> {
  const ioError = (cause: unknown) =>
    new FlowfleetError('FMT_FILE_IO', `cannot read ${path}`, { details: { path }, cause });
  let sizeBytes: number;
  try {
    sizeBytes = (await stat(path)).size;
  } catch (cause) {
    throw ioError(cause);
  }
  let last: { readonly sha256: string; readonly sizeBytes: number } | undefined;
  return {
    sizeBytes,
    readBack: () => last,
    async *open() {
      last = undefined;
      const hash = createHash('sha256');
      let read = 0;
      try {
        for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
          hash.update(chunk);
          read += chunk.byteLength;
          yield chunk;
        }
      } catch (cause) {
        throw ioError(cause);
      }
      last = { sha256: hash.digest('hex'), sizeBytes: read };
    },
  };
}
