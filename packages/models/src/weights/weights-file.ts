import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { readSafetensors, writeSafetensors, type SafetensorsTensor } from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import { safetensorsOf, tensorDataOf } from './tensor-data.js';

/** A weights file read into the platform's tensors, with its `__metadata__` strings. */
export interface WeightsContents {
  readonly tensors: Map<string, TensorData>;
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * Decodes a weights blob (safetensors, through formats' strict reader) into TensorData. Float32
 * tensors are views of `bytes` (no second copy of a downloaded blob): the caller hands it over.
 * @throws FMT_SAFETENSORS_INVALID when the bytes are not a valid safetensors file
 */
export function decodeWeights(bytes: Uint8Array): WeightsContents {
  const file = readSafetensors(bytes);
  const tensors = new Map<string, TensorData>();
  for (const [name, tensor] of file.tensors) tensors.set(name, tensorDataOf(tensor));
  return { tensors, metadata: file.metadata };
}

/**
 * Encodes TensorData weights as a safetensors blob (formats' deterministic writer).
 * @throws FMT_SAFETENSORS_INVALID when a tensor's dims do not match its data
 */
export function encodeWeights(
  tensors: ReadonlyMap<string, TensorData>,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  const out = new Map<string, SafetensorsTensor>();
  for (const [name, tensor] of tensors) out.set(name, safetensorsOf(tensor));
  return writeSafetensors(out, metadata);
}

/**
 * Reads and validates a .safetensors weights file.
 * @throws MODEL_WEIGHTS_IO when the file cannot be read; FMT_SAFETENSORS_INVALID when malformed
 */
export async function loadWeightsFile(path: string): Promise<WeightsContents> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new FlowfleetError('MODEL_WEIGHTS_IO', `cannot read weights file ${path}`, {
      details: { path },
      cause,
    });
  }
  return decodeWeights(bytes);
}

/**
 * Writes weights to a .safetensors file atomically (temp file + rename), so a reader never sees
 * a half-written file.
 * @throws MODEL_WEIGHTS_IO when the file cannot be written; FMT_SAFETENSORS_INVALID as
 *   `encodeWeights`
 */
export async function saveWeightsFile(
  path: string,
  tensors: ReadonlyMap<string, TensorData>,
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  const bytes = encodeWeights(tensors, metadata);
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temp, bytes);
    await rename(temp, path);
  } catch (cause) {
    await rm(temp, { force: true });
    throw new FlowfleetError('MODEL_WEIGHTS_IO', `cannot write weights file ${path}`, {
      details: { path },
      cause,
    });
  }
}
