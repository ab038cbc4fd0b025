import { z } from 'zod';
import {
  ComponentIdSchema,
  DeviceSchema,
  IdSchema,
  ModelIdSchema,
  TimestampSchema,
} from './atoms.js';
import { WeightVersionSchema } from './atoms.js';

// Fleet-internal records use z.object (unknown keys stripped, not rejected) so that a coordinator
// and workers of neighbouring versions can read each other during a rolling upgrade.

/** One registry cell as a worker advertises it (the registry's `ManifestRow`). */
export const ManifestRowSchema = z.object({
  registry: z.string().min(1),
  key: z.record(z.string(), z.string()),
  available: z.boolean(),
  reason: z.string().optional(),
  source: z.string().min(1),
  meta: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
/** One registry cell as a worker advertises it. */
export type ManifestRow = z.infer<typeof ManifestRowSchema>;

/** The platform facts a worker detected. */
export const PlatformFactsSchema = z.object({
  device: DeviceSchema,
  arch: z.string().min(1),
  features: z.array(z.string()),
  /** The host CPU's arch, for kernels that fall back to `cpu` on a cuda/webgpu worker. */
  cpuArch: z.string().min(1).optional(),
});
/** The platform facts a worker detected. */
export type PlatformFacts = z.infer<typeof PlatformFactsSchema>;

/** What a worker registers: who it is, what it runs on, what it can run, what weights it holds. */
export const WorkerManifestSchema = z.object({
  workerId: IdSchema,
  host: z.string().min(1),
  pid: z.int().min(1),
  platform: PlatformFactsSchema,
  /** Every declared kernel cell, unavailable ones too (key fields op, device, arch, variant). */
  kernels: z.array(ManifestRowSchema),
  /** Every declared component cell (key fields kind, device, variant). */
  components: z.array(ManifestRowSchema),
  /** Model cards this worker can instantiate. */
  models: z.array(ModelIdSchema),
  /** The process-wide limit on concurrent rollouts. */
  concurrency: z.int().min(1),
  /** The weight version held per component id (0 = the card's initial weights). */
  weights: z.record(ComponentIdSchema, WeightVersionSchema),
  startedAt: TimestampSchema,
  /** The worker's package version. */
  version: z.string().min(1),
  /**
   * Where peers fetch verified weight ranges it holds (`GET <peerUrl>/v1/blobs/:sha256` with
   * Range; FLOWFLEET_PEER_ADVERTISE_URL); absent when its peer server is off.
   */
  peerUrl: z.url({ protocol: /^https?$/ }).optional(),
});
/** What a worker registers. */
export type WorkerManifest = z.infer<typeof WorkerManifestSchema>;
