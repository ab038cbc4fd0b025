import { FlowfleetError } from '@flowfleet/errors';
import type { InputDims, OnnxArtifacts, OnnxGraphRequest } from '@flowfleet/platform';
import type { ModelComponentSpec } from '../../cards/model-card.js';
import type { LatentSize } from '../../sampling/sampling-request.js';
import { vaeStepInputDims } from './vae-clip-decode.js';
import type { WanVaeConfig } from './vae-config.js';
import { buildVaeDecoderOnnx, VAE_IO } from './vae-graph.js';
import { vaeParameterShapes } from './vae-plan.js';
import { initVaeDecoderWeights, vaeCheckpointKeys } from './vae-weights.js';

/** The component kind of a Wan2.1 VAE decoder (backends declare cells per kind). */
export const VAE_DECODER_KIND = 'vae_decoder';

/**
 * The decoder's ONNX artifacts: the decode-step graph (eager: weights as inputs, any batch and
 * latent size; captured: weights baked, the batch and latent size of `inputDims.latent` fixed).
 * @throws MODEL_INPUT_INVALID when a captured request has no 5-D `latent` dims
 */
export function createVaeOnnxArtifacts(config: WanVaeConfig): OnnxArtifacts {
  return Object.freeze({
    buildOnnx: (request: OnnxGraphRequest) => {
      if (request.form !== 'captured') return buildVaeDecoderOnnx(config, { form: 'eager' });
      const dims = request.inputDims[VAE_IO.latent];
      if (dims === undefined || dims.length !== 5) {
        throw new FlowfleetError('MODEL_INPUT_INVALID', 'input latent needs 5 dims', {
          details: { input: VAE_IO.latent, dims, present: Object.keys(request.inputDims) },
        });
      }
      const [batch = 0, , , height = 0, width = 0] = dims;
      return buildVaeDecoderOnnx(config, {
        form: 'captured',
        weights: request.weights,
        batch,
        height,
        width,
      });
    },
    eagerInputs: () => ({}),
  });
}

/**
 * A card component that decodes the DiT's latents to frames with the Wan2.1 VAE decoder of
 * `config`, one latent frame per forward (the decode step of `buildVaeDecoderOnnx`; a caller runs
 * a clip with `VaeClipDecode`). Its weights are Wan's names, its checkpoints Wan's
 * (`Wan2.1_VAE.pth`) or diffusers' (`vae/diffusion_pytorch_model.safetensors`) with the encoder's
 * tensors skipped. It has no TS reference forward: its factory, the last rung, refuses with
 * MODEL_NO_REFERENCE_FORWARD, so it runs where an ort-* cell is available.
 */
export function createVaeDecoderComponent(config: WanVaeConfig, id = 'vae'): ModelComponentSpec {
  return Object.freeze({
    id,
    kind: VAE_DECODER_KIND,
    factory: () => {
      throw new FlowfleetError(
        'MODEL_NO_REFERENCE_FORWARD',
        `component '${id}' (${VAE_DECODER_KIND}) has no TS reference forward and no backend built it; it needs onnxruntime-node (an ort-* cell)`,
        { details: { id, kind: VAE_DECODER_KIND, config: config.name } },
      );
    },
    onnx: createVaeOnnxArtifacts(config),
    forwardInputDims: (batch: number, latent: LatentSize): InputDims =>
      vaeStepInputDims(config, batch, latent.height, latent.width),
    latentSized: true,
    parameterShapes: () => vaeParameterShapes(config),
    initWeights: (seed: number) => initVaeDecoderWeights(config, seed),
    checkpointKeys: vaeCheckpointKeys(config),
  });
}
