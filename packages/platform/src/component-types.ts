/** Element types a tensor may carry across the component boundary. */
export type TensorDtype = 'float32' | 'int32' | 'int64';

/** A dense tensor: row-major data plus its dims. int64 travels as BigInt64Array. */
export interface TensorData {
  readonly dtype: TensorDtype;
  readonly dims: readonly number[];
  readonly data: Float32Array | Int32Array | BigInt64Array;
}

/** One weight version of one component: named tensors (PyTorch state_dict names). */
export interface WeightSet {
  /** Unique per (component, version, content), e.g. `dit@3`; backends cache uploads by it. */
  readonly id: string;
  readonly tensors: ReadonlyMap<string, TensorData>;
}

/** Named input or output tensors of one forward. */
export type TensorMap = Readonly<Record<string, TensorData>>;

/** The dims of each input of one forward, by input name. */
export type InputDims = Readonly<Record<string, readonly number[]>>;

/**
 * What an ONNX Runtime backend asks a component's graph builder for: the generic eager graph
 * (weights are graph inputs named like their state_dict entries, dims symbolic), or a graph
 * captured for one weight set (baked in as initializers) and the input dims of one forward (fixed
 * in the model: the Node binding ignores `freeDimensionOverrides`, DESIGN.md §8).
 */
export type OnnxGraphRequest =
  | { readonly form: 'eager' }
  | {
      readonly form: 'captured';
      readonly weights: ReadonlyMap<string, TensorData>;
      readonly inputDims: InputDims;
    };

/**
 * How a component runs on ONNX Runtime: what its card provides (`ComponentSpec.onnx`) and the
 * ort-* builders consume, so a backend needs no model knowledge.
 */
export interface OnnxArtifacts {
  /**
   * The component's ONNX ModelProto bytes in the requested form.
   * @throws FlowfleetError (the card's codes) when the weights or dims do not fit the component
   */
  buildOnnx(request: OnnxGraphRequest): Uint8Array;
  /**
   * Inputs the eager graph takes besides the forward's own, for a forward of these input dims
   * (e.g. RoPE tables); `{}` when there are none.
   */
  eagerInputs(inputDims: InputDims): TensorMap;
}

/** A forward specialised to one (weights, dims): the captured form of DESIGN.md §3. */
export interface CapturedForward {
  run(inputs: TensorMap): Promise<Record<string, TensorData>>;
  /** Memory this captured graph holds (baked weights, static buffers). */
  readonly bytesHeld: number;
  dispose(): Promise<void>;
}

/**
 * A built component (what `buildComponent` returns for kinds such as `dit`, `text_encoder`):
 * an eager forward that takes weights per call, and optionally a capture step.
 */
export interface ComponentForward {
  readonly kind: string;
  /** The backend that built it (`cpu`, `ort-cpu`, …). */
  readonly source: string;
  run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>>;
  capture?(weights: WeightSet, inputDims: InputDims): Promise<CapturedForward>;
  /** Drop anything cached for this weight set (e.g. tensors uploaded to a worker thread). */
  releaseWeights?(weightsId: string): Promise<void>;
  dispose(): Promise<void>;
}
