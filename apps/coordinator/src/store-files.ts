import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';

// The blob store's small file helpers.

/** Whether `error` is a Node.js system error with this `code` (ENOENT, EEXIST …). */
export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/** How long a client is asked to wait before sending an upload again to a full store. */
export const STORE_FULL_RETRY_AFTER_SECONDS = 5;

/** The errno codes that mean "no space (or quota) left on the store's filesystem". */
const NO_SPACE_CODES: readonly string[] = ['ENOSPC', 'EDQUOT'];

/**
 * Runs a store write, turning a full filesystem into one coded error (the caller has already
 * removed what it wrote: nothing partial stays).
 * @throws FlowfleetError API_BLOB_STORE_FULL (HTTP 507) when the filesystem is full; anything
 *   else as thrown
 */
export async function whileStoreHasSpace<T>(what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const code = NO_SPACE_CODES.find((errno) => isErrno(error, errno));
    if (code === undefined) throw error;
    throw new FlowfleetError(
      'API_BLOB_STORE_FULL',
      `the blob store has no space left for ${what}; nothing was kept (retry later)`,
      { details: { errno: code, retryAfterSeconds: STORE_FULL_RETRY_AFTER_SECONDS }, cause: error },
    );
  }
}

/** Makes a directory's entries (a new name: link, rename, mkdir) durable. */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Deletes a file; one that is already gone is fine. */
export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}

export async function hashFile(path: string): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of createReadStream(path)) {
    const bytes = chunk as Buffer;
    sizeBytes += bytes.byteLength;
    hash.update(bytes);
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}
