import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { readSafetensors } from './read-safetensors.js';
import type { SafetensorsContents } from './read-safetensors.js';
import { writeSafetensors } from './write-safetensors.js';
import type { TensorCollection } from './write-safetensors.js';

/**
 * Reads and validates a .safetensors file.
 * @throws MODEL_WEIGHTS_IO when the file cannot be read; MODEL_SAFETENSORS_INVALID when malformed.
 */
export async function loadWeightsFile(path: string): Promise<SafetensorsContents> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new FlowfleetError('MODEL_WEIGHTS_IO', `cannot read weights file ${path}`, {
      details: { path },
      cause,
    });
  }
  return readSafetensors(bytes);
}

/**
 * Writes tensors to a .safetensors file atomically (temp file + rename), so a reader never sees a
 * half-written file.
 * @throws MODEL_WEIGHTS_IO when the file cannot be written.
 */
export async function saveWeightsFile(
  path: string,
  tensors: TensorCollection,
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  const bytes = writeSafetensors(tensors, metadata);
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
