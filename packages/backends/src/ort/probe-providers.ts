import { OrtWorkerPool } from './ort-worker-pool.js';
import { ORT_PROVIDERS, type OrtProvider } from './session-options.js';
import type { ProviderProbe } from './worker-protocol.js';

/** Where to probe; without a pool a one-worker pool is started for the probe and closed after. */
export interface ProbeOptions {
  readonly pool?: OrtWorkerPool;
}

const probing = new Map<OrtProvider, Promise<ProviderProbe>>();
const settled = new Map<OrtProvider, ProviderProbe>();

async function withPool<T>(
  pool: OrtWorkerPool | undefined,
  use: (pool: OrtWorkerPool) => Promise<T>,
): Promise<T> {
  if (pool !== undefined) return use(pool);
  const own = await OrtWorkerPool.create({ threads: 1 });
  try {
    return await use(own);
  } finally {
    await own.close();
  }
}

/** Caches a probe in flight; a failure (no worker could run it) is forgotten so a later call retries. */
function remember(provider: OrtProvider, probe: Promise<ProviderProbe>): Promise<ProviderProbe> {
  const cached = probe.then((result) => {
    settled.set(provider, result);
    return result;
  });
  probing.set(provider, cached);
  cached.catch(() => {
    if (probing.get(provider) === cached) probing.delete(provider);
  });
  return cached;
}

/**
 * Whether ONNX Runtime can create a session with exactly this execution provider here (no cpu
 * fallback: DESIGN.md §8), found by creating one on the probe model in a worker thread. Cached per
 * process: the first call probes, later calls share the answer.
 * @throws BACK_ORT_LOAD_FAILED or BACK_ORT_WORKER_EXITED when no worker can run the probe.
 */
export function probeExecutionProvider(
  provider: OrtProvider,
  options: ProbeOptions = {},
): Promise<ProviderProbe> {
  return (
    probing.get(provider) ??
    remember(
      provider,
      withPool(options.pool, (pool) => pool.probe(provider)),
    )
  );
}

/**
 * Probes every provider flowfleet knows (cpu, cuda, webgpu) with one worker, and caches the
 * answers for `cachedProviderProbe` and the cells' availability predicates.
 * @throws BACK_ORT_LOAD_FAILED or BACK_ORT_WORKER_EXITED when no worker can run the probes.
 */
export async function probeOrtProviders(
  options: ProbeOptions = {},
): Promise<Readonly<Record<OrtProvider, ProviderProbe>>> {
  const missing = ORT_PROVIDERS.filter((provider) => !probing.has(provider));
  if (missing.length > 0) {
    // One worker probes them all, one after another.
    const all = withPool(options.pool, (pool) => Promise.all(missing.map((p) => pool.probe(p))));
    missing.forEach((provider, i) =>
      remember(
        provider,
        all.then((probes) => probes[i] as ProviderProbe),
      ),
    );
  }
  const results = await Promise.all(
    ORT_PROVIDERS.map((provider) => probeExecutionProvider(provider, options)),
  );
  return Object.fromEntries(results.map((probe) => [probe.provider, probe])) as Record<
    OrtProvider,
    ProviderProbe
  >;
}

/** The cached probe of a provider, or undefined before it has been probed (never probes). */
export function cachedProviderProbe(provider: OrtProvider): ProviderProbe | undefined {
  return settled.get(provider);
}

/**
 * An availability predicate for a registry cell backed by this provider: reads the probe cache
 * only (the manifest must never load onnxruntime-node), true when the probe succeeded, and throws
 * the probe's real reason otherwise (the registry keeps a predicate's message as the reason).
 */
export function ortProviderPredicate(provider: OrtProvider): () => boolean {
  return () => {
    const probe = settled.get(provider);
    if (probe === undefined) {
      throw new Error(`onnxruntime ${provider} provider not probed yet (run probeOrtProviders())`);
    }
    if (!probe.available) throw new Error(probe.reason);
    return true;
  };
}
