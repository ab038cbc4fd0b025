import { FlowfleetError } from '@flowfleet/errors';
import type { ComponentSpec, TensorData, TensorMap } from '@flowfleet/platform';

/** The parts of a component spec an ort-* builder reads (any `ComponentSpec` has them). */
export type OrtComponentSpec = Pick<ComponentSpec, 'id' | 'kind' | 'artifacts'>;

/** Input dims by input name, as `ComponentForward.capture` receives them. */
export type InputDims = Readonly<Record<string, readonly number[]>>;

/**
 * What an ort-* builder asks the card's ONNX builder for: the generic eager graph (weights are
 * graph inputs, dims symbolic), or a captured graph specialised to one weight set (baked in as
 * initializers) and fixed dims (the Node binding ignores `freeDimensionOverrides`, §8). The
 * captured options carry the input dims as `dims` and, spread in, whatever the card's
 * `onnxCapturedDims(dims)` returns (the models package reads `batch`, `frames`, `height`, `width`).
 */
export type OnnxBuildOptions =
  | { readonly form: 'eager' }
  | ({
      readonly form: 'captured';
      readonly weights: ReadonlyMap<string, TensorData>;
      readonly dims: InputDims;
    } & { readonly [fixedDim: string]: unknown });

/** The ONNX artifacts of a component spec, with the optional hooks defaulted. */
export interface OnnxArtifacts {
  buildOnnx(options: OnnxBuildOptions): Uint8Array;
  /** Inputs the eager graph takes besides the forward's own (e.g. RoPE tables); `{}` if none. */
  eagerInputs(inputDims: InputDims): TensorMap;
  /** Fixed dims to spread into the captured build options; `{}` if none. */
  capturedDims(inputDims: InputDims): Readonly<Record<string, unknown>>;
}

function optionalHook<T>(artifacts: Readonly<Record<string, unknown>>, name: string, empty: T) {
  const hook = artifacts[name];
  return typeof hook === 'function'
    ? (inputDims: InputDims) => hook.call(artifacts, inputDims) as T
    : () => empty;
}

/**
 * The spec's ONNX artifacts, checked (a spec's `artifacts` are untyped at the platform boundary):
 * `buildOnnx(options)`, and optionally `onnxEagerInputs(inputDims)` and `onnxCapturedDims(inputDims)`.
 * @throws BACK_ORT_NO_ONNX_ARTIFACT when `spec.artifacts.buildOnnx` is not a function.
 */
export function onnxArtifactsOf(spec: OrtComponentSpec): OnnxArtifacts {
  const artifacts = spec.artifacts ?? {};
  const buildOnnx = artifacts['buildOnnx'];
  if (typeof buildOnnx !== 'function') {
    throw new FlowfleetError(
      'BACK_ORT_NO_ONNX_ARTIFACT',
      `component '${spec.id}' has no artifacts.buildOnnx, so no ONNX Runtime backend can build it`,
      { details: { componentId: spec.id, kind: spec.kind } },
    );
  }
  return {
    buildOnnx: (options) => buildOnnx.call(artifacts, options) as Uint8Array,
    eagerInputs: optionalHook<TensorMap>(artifacts, 'onnxEagerInputs', {}),
    capturedDims: optionalHook<Readonly<Record<string, unknown>>>(
      artifacts,
      'onnxCapturedDims',
      {},
    ),
  };
}
