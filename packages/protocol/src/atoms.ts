import { z } from 'zod';

// Small schemas shared by every message. Identifiers are lowercase ASCII without ':' so they can
// appear inside Redis keys and BullMQ queue names unescaped.

/** The devices a job may be routed to (a closed set; mirrors `Device` in @flowfleet/platform). */
export const DEVICES = Object.freeze(['cpu', 'cuda', 'webgpu'] as const);

/** One device. */
export const DeviceSchema = z.enum(DEVICES);
/** One device. */
export type Device = z.infer<typeof DeviceSchema>;

/** A model card id (the coordinator's card registry lists the known ones). */
export const ModelIdSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a model id is 1–64 of [a-z0-9._-], starting alphanumeric');

/** A component id or kind, e.g. `dit`, `text_encoder`. */
export const ComponentIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a component id is 1–64 of [a-z0-9_], starting with a letter');

/** A kernel op id, e.g. `flow_sde_step` (cards may declare model-level ops too). */
export const OpIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,127}$/, 'an op id is 1–128 of [a-z0-9_.-], starting with a letter');

/** A job or worker id: 1–128 of [A-Za-z0-9._-]. */
export const IdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, 'an id is 1–128 of [A-Za-z0-9._-] (no ":")');

/** A weight version: strictly increasing per component from 1; 0 is a card's initial weights. */
export const WeightVersionSchema = z.int().min(0);

/** An ISO-8601 UTC timestamp, e.g. `2026-11-30T05:35:00.000Z`. */
export const TimestampSchema = z.iso.datetime();

/** A lowercase hex sha256 digest (64 characters). */
export const Sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits');

/** A seed: an integer in [0, 2^53) (NoiseSpec v1 keys Philox with its low and high words). */
export const SeedSchema = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The two samplers: `ode` (Euler flow matching) and `sde` (FlowGRPO, with per-step log-probs). */
export const SamplerSchema = z.enum(['sde', 'ode']);
/** One sampler. */
export type Sampler = z.infer<typeof SamplerSchema>;
