import type { PlatformFacts } from '@flowfleet/platform';
import {
  parseOrThrow,
  WorkerManifestSchema,
  type ManifestRow,
  type WorkerManifest,
} from '@flowfleet/protocol';
import { WORKER_VERSION } from '../version.js';

/** What a manifest is built from. */
export interface ManifestInput {
  readonly workerId: string;
  readonly host: string;
  readonly pid: number;
  readonly facts: PlatformFacts;
  /** `KERNELS.manifest()` rows of the worker's registry (read after the provider probe). */
  readonly kernels: readonly ManifestRow[];
  readonly components: readonly ManifestRow[];
  readonly models: readonly string[];
  readonly concurrency: number;
  readonly weights: Readonly<Record<string, number>>;
  readonly startedAt: string;
  /** Where peers reach its peer server, when it runs. */
  readonly peerUrl?: string;
}

/**
 * The manifest a worker registers (DESIGN §5): who it is, what it runs on, every declared kernel
 * and component cell (unavailable ones too, with the reason), the models it loaded, its
 * process-wide concurrency and the weight version it holds per component. Validated before it is
 * written, so a worker never advertises a record the coordinator would drop.
 * @throws FlowfleetError PROTO_INVALID_MANIFEST
 */
export function buildManifest(input: ManifestInput): WorkerManifest {
  const platform = {
    device: input.facts.device,
    arch: input.facts.arch,
    features: [...input.facts.features],
    ...(input.facts.cpuArch === undefined ? {} : { cpuArch: input.facts.cpuArch }),
  };
  return parseOrThrow(
    WorkerManifestSchema,
    {
      workerId: input.workerId,
      host: input.host,
      pid: input.pid,
      platform,
      kernels: input.kernels,
      components: input.components,
      models: [...input.models],
      concurrency: input.concurrency,
      weights: { ...input.weights },
      startedAt: input.startedAt,
      version: WORKER_VERSION,
      ...(input.peerUrl === undefined ? {} : { peerUrl: input.peerUrl }),
    },
    'PROTO_INVALID_MANIFEST',
    'worker manifest',
  );
}
