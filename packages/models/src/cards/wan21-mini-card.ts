import {
  createDitReferenceFactory,
  createTextEncoderReferenceFactory,
} from '../components/reference-components.js';
import { createOnnxArtifacts } from '../onnx/onnx-artifacts.js';
import { WAN21_MINI } from '../wan21-config.js';
import type { ModelCard } from './model-card.js';

// Backend artifacts per component. The ONNX helper adds its builders here (e.g. `buildOnnx`);
// keep edits to these two objects small.
const DIT_ARTIFACTS: Readonly<Record<string, unknown>> = createOnnxArtifacts(WAN21_MINI, 'dit');
const TEXT_ENCODER_ARTIFACTS: Readonly<Record<string, unknown>> = createOnnxArtifacts(
  WAN21_MINI,
  'text_encoder',
);

/** The wan21-mini card: the tiny Wan2.1-structured model the CPU reference runs quickly. */
export const wan21MiniCard: ModelCard = Object.freeze({
  id: 'wan21-mini',
  config: WAN21_MINI,
  components: Object.freeze([
    {
      id: 'dit',
      kind: 'dit',
      factory: createDitReferenceFactory(WAN21_MINI),
      artifacts: DIT_ARTIFACTS,
    },
    {
      id: 'text_encoder',
      kind: 'text_encoder',
      factory: createTextEncoderReferenceFactory(WAN21_MINI),
      artifacts: TEXT_ENCODER_ARTIFACTS,
    },
  ] as const),
  loops: Object.freeze([
    { loopId: 'diffusion_denoise', graphCapture: 'breakable', sharedWeightComponents: ['dit'] },
  ] as const),
  sampling: Object.freeze({
    steps: 8,
    shift: 3,
    guidanceScale: 4.5,
    noiseLevel: 0.7,
    sampler: 'sde',
  } as const),
  latent: Object.freeze({ frames: 4, height: 16, width: 16 }),
});
