import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import { compareCodePoints } from '../code-point-order.js';
import { readSafetensorsHeader } from './safetensors-file.js';
import type { SafetensorsHeader } from './safetensors-header.js';

/** The suffix of a sharded checkpoint's index (`model.safetensors.index.json`). */
export const SAFETENSORS_INDEX_SUFFIX = '.safetensors.index.json';

/** Why a checkpoint path was refused: the `details.reason` of FMT_CHECKPOINT_INVALID. */
export type CheckpointInvalidReason =
  | 'no-safetensors'
  | 'several-files'
  | 'several-indexes'
  | 'index-invalid'
  | 'index-mismatch'
  | 'shards-overlap';

/** One safetensors file of a checkpoint, with its validated header. */
export interface SafetensorsShardFile {
  readonly path: string;
  readonly header: SafetensorsHeader;
}

/** A checkpoint as found on disk: one file, or the shards an index names. */
export interface SafetensorsCheckpoint {
  /** The files, in code point order of their names (one for a single file). */
  readonly shards: readonly SafetensorsShardFile[];
  /** The index, for a sharded checkpoint. */
  readonly indexPath?: string;
}

/** A parsed `*.safetensors.index.json`: its metadata and which file holds each tensor. */
export interface SafetensorsIndex {
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly weightMap: ReadonlyMap<string, string>;
}

function invalid(
  path: string,
  reason: CheckpointInvalidReason,
  message: string,
  facts: Readonly<Record<string, unknown>> = {},
): FlowfleetError {
  return new FlowfleetError('FMT_CHECKPOINT_INVALID', `${path}: ${message}`, {
    details: { path, reason, ...facts },
  });
}

function ioError(path: string, cause: unknown): FlowfleetError {
  return new FlowfleetError('FMT_FILE_IO', `cannot read ${path}`, { details: { path }, cause });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses an index file's text: a JSON object with a `weight_map` object of tensor name → file
 * name (a bare name in the index's directory) and an optional `metadata` object.
 * @throws FMT_CHECKPOINT_INVALID index-invalid
 */
export function parseSafetensorsIndex(text: string, path = 'index'): SafetensorsIndex {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw invalid(path, 'index-invalid', 'the index is not JSON');
  }
  if (!isRecord(value) || !isRecord(value['weight_map'])) {
    throw invalid(path, 'index-invalid', 'the index has no weight_map object');
  }
  const metadata = value['metadata'] ?? {};
  if (!isRecord(metadata))
    throw invalid(path, 'index-invalid', 'the index metadata is not an object');
  const weightMap = new Map<string, string>();
  for (const [tensor, file] of Object.entries(value['weight_map'])) {
    if (typeof file !== 'string' || file === '' || basename(file) !== file) {
      throw invalid(
        path,
        'index-invalid',
        `weight_map[${JSON.stringify(tensor)}] is not a file name`,
        {
          tensor,
        },
      );
    }
    weightMap.set(tensor, file);
  }
  if (weightMap.size === 0) throw invalid(path, 'index-invalid', 'the weight_map is empty');
  return { metadata, weightMap };
}

/** Every way the index and the shards' headers disagree, as one line each. */
function indexProblems(index: SafetensorsIndex, shards: readonly SafetensorsShardFile[]): string[] {
  const problems: string[] = [];
  const holder = new Map<string, string>();
  for (const shard of shards) {
    const file = basename(shard.path);
    for (const tensor of shard.header.tensors.keys()) {
      const other = holder.get(tensor);
      if (other !== undefined) problems.push(`${tensor} is in both ${other} and ${file}`);
      holder.set(tensor, file);
      const listed = index.weightMap.get(tensor);
      if (listed === undefined) problems.push(`${tensor} (in ${file}) is not in the weight_map`);
      else if (listed !== file)
        problems.push(`${tensor} is in ${file}, the weight_map says ${listed}`);
    }
  }
  for (const [tensor, file] of index.weightMap) {
    if (!holder.has(tensor)) problems.push(`${tensor} is not in ${file}`);
  }
  return problems;
}

async function readShards(paths: readonly string[]): Promise<SafetensorsShardFile[]> {
  const shards: SafetensorsShardFile[] = [];
  for (const path of paths) shards.push({ path, header: await readSafetensorsHeader(path) });
  return shards;
}

async function openIndexed(indexPath: string): Promise<SafetensorsCheckpoint> {
  let text: string;
  try {
    text = await readFile(indexPath, 'utf8');
  } catch (cause) {
    throw ioError(indexPath, cause);
  }
  const index = parseSafetensorsIndex(text, indexPath);
  const files = [...new Set(index.weightMap.values())].sort(compareCodePoints);
  const shards = await readShards(files.map((file) => join(dirname(indexPath), file)));
  const problems = indexProblems(index, shards);
  if (problems.length > 0) {
    throw invalid(
      indexPath,
      'index-mismatch',
      `the index and its shards disagree (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''})`,
      { problems },
    );
  }
  return { shards, indexPath };
}

/**
 * Finds a checkpoint at `path`: a safetensors file; a directory with one `*.safetensors.index.json`
 * (the shards it names, each header read and checked against the index: every tensor in exactly
 * the file the index names); or a directory with exactly one `*.safetensors` file. Reads only
 * headers, never tensor data.
 * @throws FMT_CHECKPOINT_INVALID (`details.reason`), FMT_SAFETENSORS_INVALID (a shard's header),
 *   FMT_FILE_IO
 */
export async function openSafetensorsCheckpoint(path: string): Promise<SafetensorsCheckpoint> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (cause) {
    throw ioError(path, cause);
  }
  if (!isDirectory) {
    if (path.endsWith(SAFETENSORS_INDEX_SUFFIX)) return openIndexed(path);
    return { shards: await readShards([path]) };
  }
  let names: string[];
  try {
    names = (await readdir(path)).sort(compareCodePoints);
  } catch (cause) {
    throw ioError(path, cause);
  }
  const indexes = names.filter((name) => name.endsWith(SAFETENSORS_INDEX_SUFFIX));
  if (indexes.length > 1) {
    throw invalid(path, 'several-indexes', `has several indexes (${indexes.join(', ')})`, {
      files: indexes,
    });
  }
  if (indexes[0] !== undefined) return openIndexed(join(path, indexes[0]));
  const files = names.filter((name) => name.endsWith('.safetensors'));
  if (files.length === 0) {
    throw invalid(path, 'no-safetensors', 'has no .safetensors file');
  }
  if (files.length > 1) {
    throw invalid(
      path,
      'several-files',
      `has ${files.length} .safetensors files and no ${SAFETENSORS_INDEX_SUFFIX} naming them`,
      { files },
    );
  }
  return { shards: await readShards([join(path, files[0]!)]) };
}
