import { createHash } from 'node:crypto';
import { z } from 'zod';
import { IdSchema, TimestampSchema } from './atoms.js';

/** Hex digits of a manifest digest. */
const MANIFEST_DIGEST_CHARS = 16;

/**
 * What a worker writes to its heartbeat key (with a TTL) on every beat: the key's presence says
 * it is alive, the body says how busy it is and which manifest it has written.
 */
export const WorkerHeartbeatSchema = z.object({
  workerId: IdSchema,
  at: TimestampSchema,
  /** Rollouts running now. */
  activeJobs: z.int().min(0),
  /** Float32 bytes of the text embeddings it caches by sha256 (absent from older workers). */
  embedsCacheBytes: z.int().min(0).optional(),
  /** The lanes it serves now. */
  lanes: z.array(z.string().regex(/^lane-[0-9a-f]{16}$/)).default(() => []),
  /**
   * `manifestDigestOf` the manifest JSON the worker last wrote (absent from older workers): a
   * reader re-reads the manifest only when it differs from the copy it holds.
   */
  manifestDigest: z
    .string()
    .regex(new RegExp(`^[0-9a-f]{${MANIFEST_DIGEST_CHARS}}$`))
    .optional(),
});
/** A worker's heartbeat. */
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeatSchema>;

/** The digest a heartbeat carries of the manifest JSON text it refers to (sha-256, 16 hex digits). */
export function manifestDigestOf(manifestJson: string): string {
  return createHash('sha256').update(manifestJson).digest('hex').slice(0, MANIFEST_DIGEST_CHARS);
}
