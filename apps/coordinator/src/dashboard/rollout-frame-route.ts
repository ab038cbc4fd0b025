import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { encodePngRgb, RolloutFrames, SafetensorsFileReader } from '@flowfleet/formats';
import { IdSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CoordinatorServices } from '../services.js';
import { storedResultBytes } from '../stored-result-bytes.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';

/** `GET /v1/rollouts/:id/frames/:sample/:frame` path: a sample of the group, a clip frame index. */
export const RolloutFrameParamsSchema = z.strictObject({
  id: IdSchema,
  sample: z.coerce.number().int().min(0).max(0x7fffffff).describe('the sample g of the group'),
  frame: z.coerce
    .number()
    .int()
    .min(0)
    .max(0x7fffffff)
    .describe('the clip frame index (one of the result’s frame_indices)'),
});

/** A stored result is immutable (written once): a browser may keep its frames. */
const FRAME_CACHE_CONTROL = 'private, max-age=31536000, immutable';

function frameNotFound(
  id: string,
  reason: 'no-frames' | 'sample' | 'frame',
  message: string,
  facts: Readonly<Record<string, unknown>> = {},
): FlowfleetError {
  return new FlowfleetError('API_FRAME_NOT_FOUND', message, { details: { id, reason, ...facts } });
}

/** The format's refusal of a stored result, as the coordinator's own code. */
function unreadable(id: string, error: FlowfleetError): FlowfleetError {
  return new FlowfleetError(
    'API_RESULT_UNREADABLE',
    `the stored result of rollout ${id} is not a readable rollout file`,
    { details: { id, cause: { code: error.code, ...error.details } }, cause: error },
  );
}

/**
 * The RGB bytes of clip frame `frame` of sample `sample` in rollout `id`'s stored result, and
 * what reading it cost. Reads the 8-byte length, the header, `frame_indices` (4 · N bytes) and
 * the frame (H · W · 3 bytes) — never the latents or the other frames.
 * @throws FlowfleetError API_JOB_NOT_FOUND, API_RESULT_NOT_FOUND, API_FRAME_NOT_FOUND,
 *   API_RESULT_UNREADABLE
 */
async function readStoredFrame(
  services: Pick<CoordinatorServices, 'blobs' | 'rollouts'>,
  id: string,
  sample: number,
  frame: number,
): Promise<{ rgb: Uint8Array; width: number; height: number; bytesRead: number }> {
  const source = await storedResultBytes(services.blobs, id);
  if (source === undefined) {
    if (!(await services.rollouts.exists(id))) {
      throw new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
    }
    throw new FlowfleetError('API_RESULT_NOT_FOUND', `rollout ${id} has no stored result yet`, {
      details: { id },
    });
  }
  let reader: SafetensorsFileReader | undefined;
  try {
    reader = await SafetensorsFileReader.open(source);
    const frames = await RolloutFrames.open(reader);
    if (frames === null) {
      throw frameNotFound(id, 'no-frames', `rollout ${id} returned no frames`);
    }
    if (sample >= frames.group) {
      throw frameNotFound(id, 'sample', `rollout ${id} has ${frames.group} samples`, {
        sample,
        group: frames.group,
      });
    }
    const at = frames.frameIndices.indexOf(frame);
    if (at < 0) {
      throw frameNotFound(id, 'frame', `rollout ${id} did not return clip frame ${frame}`, {
        frame,
        frameIndices: Array.from(frames.frameIndices),
      });
    }
    const rgb = await frames.frame(sample, at);
    const { width, height } = frames.video;
    return { rgb, width, height, bytesRead: reader.bytesRead };
  } catch (error) {
    if (isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) throw unreadable(id, error);
    if (isFlowfleetError(error, 'FMT_ROLLOUT_INVALID')) throw unreadable(id, error);
    throw error;
  } finally {
    await reader?.close();
  }
}

/**
 * `GET /v1/rollouts/:id/frames/:sample/:frame` (viewer): one decoded frame of a completed
 * rollout's stored result as a PNG, cacheable for good (a result is written once). The dashboard
 * fetches it with its bearer token, so the token never sits in an image URL.
 */
export function registerRolloutFrameRoute(
  app: FastifyInstance,
  services: CoordinatorServices,
): void {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/rollouts/:id/frames/:sample/:frame', {
    schema: { params: RolloutFrameParamsSchema },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          "One decoded frame of a completed rollout (RolloutFile v2's frames): clip frame `frame` of sample `sample` as a PNG (RGB, lossless), cacheable (results are immutable). Reads the result's header, its frame indices and that frame's H·W·3 bytes, never the whole file",
        produces: { status: 200, body: 'png' },
        errors: [
          'API_JOB_NOT_FOUND',
          'API_RESULT_NOT_FOUND',
          'API_FRAME_NOT_FOUND',
          'API_RESULT_UNREADABLE',
        ],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const { id, sample, frame } = request.params;
      const read = await readStoredFrame(services, id, sample, frame);
      const png = encodePngRgb(read.rgb, read.width, read.height);
      request.log.debug({ id, sample, frame, bytesRead: read.bytesRead }, 'frame served');
      return reply
        .header('content-type', 'image/png')
        .header('content-length', png.length)
        .header('cache-control', FRAME_CACHE_CONTROL)
        .header('x-content-type-options', 'nosniff')
        .send(Buffer.from(png.buffer, png.byteOffset, png.length));
    },
  });
}
