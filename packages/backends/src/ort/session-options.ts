import type { InferenceSession } from 'onnxruntime-node';

/** The ONNX Runtime execution providers flowfleet knows how to ask for. */
export type OrtProvider = 'cpu' | 'cuda' | 'webgpu';

/** Every provider, in the order the capability report lists them. */
export const ORT_PROVIDERS: readonly OrtProvider[] = ['cpu', 'cuda', 'webgpu'];

/** What varies between sessions; everything else is fixed by `ortSessionOptions`. */
export interface OrtSessionSettings {
  readonly provider: OrtProvider;
  readonly intraOpThreads: number;
}

/**
 * The session options of every flowfleet session. Why each one (DESIGN.md §8):
 * - exactly one execution provider, no `cpu` fallback: `['cuda', 'cpu']` does not fall back in the
 *   Node binding, and a silent fallback would hide that the GPU path is missing;
 * - `graphOptimizationLevel: 'basic'` and `disable_prepacking`: the only settings measured to keep
 *   weights-as-inputs (eager) and weights-as-initializers (captured) bit-identical; `extended`/`all`
 *   fuse ops and pre-packing reorders the GEMM accumulation, both change the last bits;
 * - spinning off: an idle session otherwise keeps a core busy, which on a 2-core worker starves the
 *   event loop and the other sessions.
 */
export function ortSessionOptions(settings: OrtSessionSettings): InferenceSession.SessionOptions {
  return {
    executionProviders: [settings.provider],
    graphOptimizationLevel: 'basic',
    intraOpNumThreads: settings.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    extra: {
      session: {
        disable_prepacking: '1',
        'intra_op.allow_spinning': '0',
        'inter_op.allow_spinning': '0',
      },
    },
  };
}
