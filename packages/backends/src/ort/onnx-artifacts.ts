import { FlowfleetError } from '@flowfleet/errors';
import type { ComponentSpec, OnnxArtifacts } from '@flowfleet/platform';

/** The parts of a component spec an ort-* builder reads (any `ComponentSpec` has them). */
export type OrtComponentSpec = Pick<ComponentSpec, 'id' | 'kind' | 'onnx'>;

/**
 * The spec's ONNX artifacts (platform's `OnnxArtifacts`, which the card provides).
 * @throws BACK_ORT_NO_ONNX_ARTIFACT when the spec has none.
 */
export function onnxArtifactsOf(spec: OrtComponentSpec): OnnxArtifacts {
  if (spec.onnx === undefined) {
    throw new FlowfleetError(
      'BACK_ORT_NO_ONNX_ARTIFACT',
      `component '${spec.id}' has no ONNX artifacts, so no ONNX Runtime backend can build it`,
      { details: { componentId: spec.id, kind: spec.kind } },
    );
  }
  return spec.onnx;
}
