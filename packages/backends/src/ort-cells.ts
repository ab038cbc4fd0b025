import { existsSync } from 'node:fs';
import { FlowfleetError } from '@flowfleet/errors';
import {
  detectPlatform,
  PLATFORM_OVERRIDE_ENV,
  type ComponentForward,
  type ComponentSpec,
  type Device,
  type PlatformFacts,
} from '@flowfleet/platform';
import { DEFAULT_VARIANT, registerComponent, type ComponentBuilder } from '@flowfleet/registry';
import { isDeclaredBy, resolveRegistries, type BackendRegistries } from './backend-registries.js';
import { ortBindingPath } from './ort-binding-path.js';

/** The ONNX Runtime execution providers flowfleet declares cells for. */
export type OrtCellProvider = 'cpu' | 'cuda' | 'webgpu';

/** The providers in declaration order. */
export const ORT_CELL_PROVIDERS: readonly OrtCellProvider[] = Object.freeze([
  'cpu',
  'cuda',
  'webgpu',
]);

/**
 * How far an ONNX Runtime component may drift from the TS reference over a whole denoise run
 * (DESIGN.md §2 parity ladder): ORT accumulates in float32 where the reference uses float64, so
 * elementwise relative error is unbounded near zero crossings; the bound is therefore `within`'s
 * "max-rel ≤ rtol OR max-abs ≤ atol". Checked by test/parity/denoise-parity.test.ts.
 */
export const ORT_PARITY_TOLERANCE = Object.freeze({ rtol: 1e-5, atol: 1e-5 });

/**
 * How far the `ort-webgpu` cells may drift from the TS reference, and a webgpu rollout from an
 * ort-cpu one, over a whole denoise run: WebGPU shaders accumulate in float32 in another order
 * than the CPU provider's GEMMs, so the bound is stated separately from ORT_PARITY_TOLERANCE.
 * Measured on a software adapter (lavapipe, 2026-12-05): one forward of the mini card 1.4e-6 from the
 * TS reference; an 8-step SDE rollout with CFG 4.7e-6 on the final latents and 1.5e-8 on the
 * log-probs from ort-cpu — so 5e-5 leaves 10× for a real GPU's own rounding. Checked by
 * test/webgpu/device-parity.test.ts and the component conformance suite.
 */
export const ORT_WEBGPU_PARITY_TOLERANCE = Object.freeze({ rtol: 1e-5, atol: 5e-5 });

/** The tolerance each provider's cells state in their meta. */
const PARITY_TOLERANCE: Readonly<Record<OrtCellProvider, { rtol: number; atol: number }>> = {
  cpu: ORT_PARITY_TOLERANCE,
  cuda: ORT_PARITY_TOLERANCE,
  webgpu: ORT_WEBGPU_PARITY_TOLERANCE,
};

/** A cached provider probe: could ONNX Runtime create a session with this provider here? */
export interface OrtProbeResult {
  readonly available: boolean;
  /** The runtime's own message when unavailable. */
  readonly reason?: string;
}

/** A component builder for one provider, as the COMPONENTS registry stores it. */
export type OrtProviderBuilder = (
  spec: ComponentSpec,
  instance: unknown,
) => Promise<ComponentForward>;

/** What `declareOrtCells` needs; the ONNX Runtime code in src/ort/ supplies the builders. */
export interface DeclareOrtCellsOptions {
  readonly registries?: BackendRegistries;
  /**
   * The component kinds to declare cells for: the kinds of the cards the caller serves (the
   * builder builds any spec with `onnx` artifacts and refuses the others with a coded error, so
   * the platform moves on to the card's factory).
   */
  readonly kinds: readonly string[];
  /** The builder for one provider; called once per provider at declaration. */
  readonly builderFor: (provider: OrtCellProvider) => OrtProviderBuilder;
  /** Reads the provider probe cache (never probes); default: nothing probed yet. */
  readonly cachedProbe?: (provider: OrtCellProvider) => OrtProbeResult | undefined;
  /**
   * The device the declaring worker serves (one device per worker process). Given, the
   * `ort-webgpu` and `ort-cuda` cells are available only on a worker of that device, so a cpu
   * worker on a machine with a GPU does not count as GPU capacity; omitted, availability is the
   * probe's (and, for cuda, detection's) alone.
   */
  readonly device?: Device;
}

/** What the availability predicates consult; injectable for tests. */
export interface OrtHostFacts {
  /** Path of the native binding, when the package resolves. */
  bindingPath(): string | undefined;
  exists(file: string): boolean;
  /** The real (never test-overridden) platform facts. */
  platform(): PlatformFacts;
}

let realFacts: PlatformFacts | undefined;

/** Detection without the test-only override: a cell must not claim a GPU the box lacks. */
function realPlatform(): PlatformFacts {
  const facts = detectPlatform();
  if (!facts.features.some((feature) => feature.startsWith('override:'))) return facts;
  realFacts ??= detectPlatform({ env: { ...process.env, [PLATFORM_OVERRIDE_ENV]: undefined } });
  return realFacts;
}

/** The host's own answers. */
export const HOST_ORT_FACTS: OrtHostFacts = {
  bindingPath: ortBindingPath,
  exists: existsSync,
  platform: realPlatform,
};

function unavailable(provider: OrtCellProvider, reason: string): never {
  // The registry keeps a predicate's message as the manifest reason, so say exactly why.
  throw new FlowfleetError('BACK_PROVIDER_UNAVAILABLE', `ort-${provider}: ${reason}`, {
    details: { provider },
  });
}

/**
 * The availability predicate of an `ort-<provider>` cell. It reads files and caches only, never
 * loads onnxruntime-node: cpu needs the native binding on disk; cuda also needs detection to say
 * cuda (a CUDA device and the provider library); webgpu needs a cached probe that succeeded.
 * A cached failed probe makes any provider unavailable with the runtime's reason.
 */
export function ortAvailability(
  provider: OrtCellProvider,
  cachedProbe: (provider: OrtCellProvider) => OrtProbeResult | undefined,
  host: OrtHostFacts = HOST_ORT_FACTS,
  device?: Device,
): () => boolean {
  return () => {
    const binding = host.bindingPath();
    if (binding === undefined) unavailable(provider, 'onnxruntime-node is not installed');
    if (!host.exists(binding)) unavailable(provider, `native binding missing at ${binding}`);
    if (provider === 'cuda') {
      const facts = host.platform();
      if (facts.device !== 'cuda') {
        unavailable(provider, 'no CUDA device with the onnxruntime CUDA provider library here');
      }
    }
    if (provider !== 'cpu' && device !== undefined && device !== provider) {
      unavailable(
        provider,
        `this worker serves ${device} (one device per worker process: FLOWFLEET_DEVICE=${provider} starts a ${provider} worker)`,
      );
    }
    const probe = cachedProbe(provider);
    if (probe === undefined) {
      if (provider === 'webgpu') unavailable(provider, 'not probed: call OrtSessions.probeAll()');
      return true;
    }
    if (!probe.available) unavailable(provider, probe.reason ?? 'probe failed');
    return true;
  };
}

const AVAILABLE_WHEN: Readonly<Record<OrtCellProvider, string>> = {
  cpu: 'onnxruntime-node native binding on disk',
  cuda: 'binding on disk, CUDA device and onnxruntime CUDA provider library present',
  webgpu:
    'binding on disk, a webgpu worker (when the device is given) and a cached OrtSessions.probeAll() result that lists webgpu',
};

/**
 * Declares the `ort-cpu`, `ort-cuda` and `ort-webgpu` component cells for `options.kinds` with
 * honest availability predicates, without loading onnxruntime-node. Idempotent: declaring them again is a no-op.
 * @throws FlowfleetError REG_DUPLICATE_CELL when another backend already holds one of the keys
 */
export function declareOrtCells(options: DeclareOrtCellsOptions, host?: OrtHostFacts): void {
  const { components } = resolveRegistries(options.registries);
  const cachedProbe = options.cachedProbe ?? (() => undefined);
  for (const provider of ORT_CELL_PROVIDERS) {
    const source = `ort-${provider}`;
    const pending = [...new Set(options.kinds)].filter(
      (kind) => !isDeclaredBy(components, [kind, provider, DEFAULT_VARIANT], source),
    );
    if (pending.length === 0) continue;
    const build = options.builderFor(provider) as ComponentBuilder;
    const available = ortAvailability(provider, cachedProbe, host, options.device);
    for (const kind of pending) {
      registerComponent(
        {
          kind,
          device: provider,
          build,
          source,
          available,
          meta: {
            executionProvider: provider,
            availableWhen: AVAILABLE_WHEN[provider],
            parityRtol: PARITY_TOLERANCE[provider].rtol,
            parityAtol: PARITY_TOLERANCE[provider].atol,
          },
        },
        components,
      );
    }
  }
}
