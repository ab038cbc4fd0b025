import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { SafetensorsDigester, type SafetensorsDigest } from '@flowfleet/formats';
import { Sha256Schema } from '@flowfleet/protocol';
import { z } from 'zod';
import { isErrno, removeFile } from './store-files.js';

/** One tensor of a stored safetensors blob: header facts, absolute byte span, sha256. */
const TensorSpanSchema = z.strictObject({
  dtype: z.string().min(1),
  shape: z.array(z.int().min(0)),
  begin: z.int().min(0),
  end: z.int().min(0),
  sha256: Sha256Schema,
});

/**
 * What the store knows about a blob's contents, taken as it was uploaded: for a safetensors file
 * every tensor's span and digest; for anything else `tensors: null` and why. Kept beside the blob
 * (`digests/<sha256>.json`); files read back from disk are checked with this schema.
 */
export const BlobDigestSchema = z.strictObject({
  sha256: Sha256Schema,
  sizeBytes: z.int().min(0),
  tensors: z.record(z.string(), TensorSpanSchema).nullable(),
  invalid: z.strictObject({ reason: z.string(), message: z.string() }).optional(),
});
/** A blob's contents digest. */
export type BlobDigest = z.infer<typeof BlobDigestSchema>;

function spansOf(digest: SafetensorsDigest): BlobDigest['tensors'] {
  const tensors: Record<string, z.infer<typeof TensorSpanSchema>> = {};
  const { dataStart } = digest.header;
  for (const [name, entry] of digest.header.tensors) {
    tensors[name] = {
      dtype: entry.dtype,
      shape: [...entry.shape],
      begin: dataStart + entry.dataOffsets[0],
      end: dataStart + entry.dataOffsets[1],
      sha256: digest.tensorSha256.get(name)!,
    };
  }
  return tensors;
}

/**
 * Feeds a blob's bytes to formats' SafetensorsDigester as they stream into the store and never
 * throws: a blob that is not a safetensors file is a blob all the same (its digest says so).
 */
export class BlobDigestTaker {
  readonly #digester = new SafetensorsDigester();
  #invalid: { reason: string; message: string } | undefined;

  update(chunk: Uint8Array): void {
    if (this.#invalid !== undefined) return;
    try {
      this.#digester.update(chunk);
    } catch (error) {
      this.#invalid = this.#reasonOf(error);
    }
  }

  /** The digest of the blob `sha256` of `sizeBytes` bytes, once every byte was fed. */
  finish(sha256: string, sizeBytes: number): BlobDigest {
    if (this.#invalid === undefined) {
      try {
        return { sha256, sizeBytes, tensors: spansOf(this.#digester.finish()) };
      } catch (error) {
        this.#invalid = this.#reasonOf(error);
      }
    }
    return { sha256, sizeBytes, tensors: null, invalid: this.#invalid };
  }

  #reasonOf(error: unknown): { reason: string; message: string } {
    if (!isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) throw error;
    return { reason: String(error.details.reason), message: error.message };
  }
}

/** Writes a digest file atomically (through `temp`, on the same filesystem). */
export async function writeBlobDigest(
  path: string,
  temp: string,
  digest: BlobDigest,
): Promise<void> {
  try {
    await writeFile(temp, JSON.stringify(digest));
    await rename(temp, path);
  } catch (error) {
    await removeFile(temp);
    throw error;
  }
}

/** The digest kept at `path`, or undefined when there is none or it is unreadable. */
export async function readBlobDigest(
  path: string,
  sha256: string,
): Promise<BlobDigest | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const parsed = BlobDigestSchema.safeParse(value);
  return parsed.success && parsed.data.sha256 === sha256 ? parsed.data : undefined;
}

/**
 * Takes the digest of a stored blob from its file (a blob stored without one), checking that the
 * bytes still hash to the blob's name, so the digest vouches for the bytes the trainer sent.
 * @throws FlowfleetError API_BLOB_CORRUPT when they do not
 */
export async function digestStoredBlob(path: string, sha256: string): Promise<BlobDigest> {
  const taker = new BlobDigestTaker();
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of createReadStream(path)) {
    const bytes = chunk as Buffer;
    sizeBytes += bytes.byteLength;
    hash.update(bytes);
    taker.update(bytes);
  }
  const actual = hash.digest('hex');
  if (actual !== sha256) {
    throw new FlowfleetError(
      'API_BLOB_CORRUPT',
      `stored blob ${sha256} now hashes to ${actual}; upload it again`,
      { details: { sha256, actual } },
    );
  }
  return taker.finish(sha256, sizeBytes);
}
