import type { ComponentForward, ComponentSpec, InputDims, TensorData } from '@flowfleet/platform';
import type { CheckpointKeys } from '../checkpoint/checkpoint-keys.js';
import type { FrameDecoder } from '../decode/frame-decoder.js';
import type { RolloutLoop } from '../loop/rollout-loop.js';
import type {
  LatentSize,
  ResolvedSamplingRequest,
  SamplingDefaults,
  SamplingRequest,
  TextEmbeddingSpec,
} from '../sampling/sampling-request.js';

/** One driven loop of a card (DESIGN.md §3). */
export interface LoopSpec {
  readonly loopId: string;
  /** `breakable`: capturable, with eager breaks where a step cannot be captured. */
  readonly graphCapture: 'eager' | 'breakable';
  /** Components whose resident weight version is part of a captured graph's key. */
  readonly sharedWeightComponents: readonly string[];
  /** A fresh loop object (a loop keeps every per-request value in its state). */
  create(): RolloutLoop;
}

/**
 * A card component: a platform ComponentSpec whose TS-reference factory builds a forward (and
 * whose `onnx` artifacts, when it has them, let the ort-* backends build it).
 */
export interface ModelComponentSpec extends ComponentSpec<unknown, ComponentForward> {
  /** The card's own kind name; backends register builders per kind. */
  readonly kind: string;
  /**
   * The input dims of one forward over `batch` samples whose latents have size `latent` (what a
   * captured graph or an ONNX export fixes); a component that is not `latentSized` ignores it.
   */
  forwardInputDims(batch: number, latent: LatentSize): InputDims;
  /** Whether the forward's input dims follow the latent size (a DiT's) or only the batch. */
  readonly latentSized: boolean;
  /** Every weight tensor's name and dims (what a weight sync of this component must carry). */
  parameterShapes(): Map<string, number[]>;
  /** Deterministic float32 weights drawn from `seed` (a worker's version 0). */
  initWeights(seed: number): Map<string, TensorData>;
  /**
   * The key vocabularies and prefixes a checkpoint or LoRA adapter of this component may use
   * besides the names of `parameterShapes` (absent: those names only).
   */
  readonly checkpointKeys?: CheckpointKeys;
}

/** What a request of a card needs from a worker, beyond where it may run. */
export interface CardCapabilities {
  /** Kernel ops the rollout dispatches (solver ops plus the card's model-level ops). */
  readonly ops: readonly string[];
  /** The card's component kinds. */
  readonly componentKinds: readonly string[];
}

/**
 * Everything flowfleet knows about one model; nothing outside `models` names a model. The
 * runtime, worker and coordinator reach a card through a CardRegistry by its id.
 */
export interface ModelCard<Config = unknown> {
  readonly id: string;
  readonly config: Config;
  readonly components: readonly ModelComponentSpec[];
  /** The card's loops; the first runs rollouts. */
  readonly loops: readonly LoopSpec[];
  readonly sampling: SamplingDefaults;
  readonly latent: LatentSize;
  /**
   * Present when the card's text input is embeddings (it has no text encoder): a request names
   * uploaded embeddings of this width and at most this many rows (`promptEmbeds`).
   */
  readonly textEmbeddings?: TextEmbeddingSpec;
  /** Present when the card can decode its latents into frames (a VAE): requests may ask for them. */
  readonly frameDecoder?: FrameDecoder;
  /**
   * Whether a worker that names no models loads this card (false for a published-size card: a
   * worker loads its gigabytes only when told to).
   */
  readonly loadByDefault: boolean;
  /**
   * The card's request rules: fills defaults and checks a request. The coordinator calls it at
   * the edge and the runtime before a rollout, so what the edge accepts a worker can complete.
   * @throws FlowfleetError MODEL_INVALID_REQUEST naming the field
   */
  resolveRequest(request: SamplingRequest): ResolvedSamplingRequest;
  /** The kernel ops a resolved request dispatches. */
  requiredOps(request: ResolvedSamplingRequest): readonly string[];
}
