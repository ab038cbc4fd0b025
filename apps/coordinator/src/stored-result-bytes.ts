import { FlowfleetError } from '@flowfleet/errors';
import type { RandomAccessBytes } from '@flowfleet/formats';
import type { BlobStore } from './blob-store.js';

/**
 * Job `jobId`'s stored result.safetensors as RandomAccessBytes: each read is one ranged open of
 * the blob store (a `pread` on the filesystem store, a ranged GET on an object store), so a
 * reader fetches the header and the tensors it asks for and never the whole file. Undefined when
 * no result is stored.
 * @throws FlowfleetError API_RESULT_NOT_FOUND from a read when the result was removed (retention)
 *   after it was opened
 */
export async function storedResultBytes(
  blobs: BlobStore,
  jobId: string,
): Promise<RandomAccessBytes | undefined> {
  const opened = await blobs.openResult(jobId, 'result.safetensors');
  if (opened === undefined) return undefined;
  // Only its size: the stream is dropped unread.
  opened.stream.destroy();
  const sizeBytes = opened.totalBytes;
  const name = `the result of rollout ${jobId}`;
  return {
    name,
    sizeBytes,
    async read(target, position) {
      const end = Math.min(position + target.length, sizeBytes);
      if (end <= position) return 0;
      const range = await blobs.openResult(jobId, 'result.safetensors', {
        start: position,
        end: end - 1,
      });
      if (range === undefined) {
        throw new FlowfleetError('API_RESULT_NOT_FOUND', `${name} was removed while it was read`, {
          details: { id: jobId },
        });
      }
      let filled = 0;
      for await (const chunk of range.stream) {
        const bytes = chunk as Buffer;
        target.set(bytes.subarray(0, target.length - filled), filled);
        filled += Math.min(bytes.length, target.length - filled);
      }
      return filled;
    },
  };
}
