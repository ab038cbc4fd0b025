import { FlowfleetError } from '@flowfleet/errors';
import type { TextEmbedding } from '../sampling/sampling-request.js';
import type { Wan21Config } from './wan21-config.js';

function invalidEmbedding(
  message: string,
  details: Readonly<Record<string, unknown>>,
): FlowfleetError {
  return new FlowfleetError('MODEL_INPUT_INVALID', message, {
    details: { input: 'textEmbeddings', ...details },
  });
}

/**
 * Wan's context rule: a prompt's embedding, cut to its true token count, followed by zero rows up
 * to the text length (Wan's `WanModel.forward` concatenates `u.new_zeros(text_len - u.size(0),
 * dim)`, diffusers' `WanPipeline` does the same in `_get_t5_prompt_embeds`). The DiT does not mask
 * cross-attention, so the zero rows — after `text_embedding`, its bias — are part of the input.
 * @returns `[textLen, textDim]` float32, a new array
 * @throws FlowfleetError MODEL_INPUT_INVALID when the width is not `textDim`, the rows are not in
 *   [1, textLen], or the data is not `tokens × dim` long
 */
export function padTextEmbedding(
  embedding: TextEmbedding,
  config: Pick<Wan21Config, 'textLen' | 'textDim'>,
): Float32Array {
  const { tokens, dim, data } = embedding;
  if (dim !== config.textDim) {
    throw invalidEmbedding(`an embedding has width ${dim}, the card takes ${config.textDim}`, {
      dim,
      expected: config.textDim,
    });
  }
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > config.textLen) {
    throw invalidEmbedding(`an embedding has ${tokens} rows, expected 1..${config.textLen}`, {
      tokens,
      maxTokens: config.textLen,
    });
  }
  if (data.length !== tokens * dim) {
    throw invalidEmbedding(
      `an embedding's data has ${data.length} values, expected ${tokens * dim}`,
      {
        length: data.length,
        expected: tokens * dim,
      },
    );
  }
  const padded = new Float32Array(config.textLen * config.textDim);
  padded.set(data, 0);
  return padded;
}
