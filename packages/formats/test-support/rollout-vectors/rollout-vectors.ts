import { createHash } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import { readRolloutFile } from '../../src/rollout/read-rollout-file.js';
import { prettyJson, rolloutFileJson } from './rollout-json.js';
import { ROLLOUT_FORMAT, ROLLOUT_FORMAT_VERSION } from '../../src/rollout/rollout-metadata.js';
import { writeRolloutFile } from '../../src/rollout/write-rollout-file.js';
import { invalidVectorSpecs } from './invalid-vectors.js';
import { validVectorSpecs } from './valid-vectors.js';

/** Where the vectors are checked in, relative to the repository root. */
export const ROLLOUT_VECTORS_DIR = 'docs/formats/vectors/rollout-file-v1';

/** One file of the vector set, by its path inside ROLLOUT_VECTORS_DIR. */
export interface VectorFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** An entry of `manifest.json`. */
export interface ManifestEntry {
  readonly name: string;
  readonly about: string;
  readonly file: string;
  readonly sha256: string;
  /** Valid vectors: the canonical JSON a conforming reader must produce. */
  readonly expected?: string;
  /** Malformed vectors: the error code and `details.reason` a conforming reader must give. */
  readonly code?: string;
  readonly reason?: string;
}

/** The vector set's `manifest.json`. */
export interface VectorManifest {
  readonly format: string;
  readonly format_version: string;
  readonly spec: string;
  readonly valid: readonly ManifestEntry[];
  readonly invalid: readonly ManifestEntry[];
}

const text = (value: string) => new TextEncoder().encode(`${value}\n`);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function refusal(bytes: Uint8Array): { code: string; reason: string } | undefined {
  try {
    readRolloutFile(bytes);
    return undefined;
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    return { code: error.code, reason: String(error.details['reason']) };
  }
}

/**
 * Every file of the RolloutFile v1 test vectors, computed: the valid files written by
 * `writeRolloutFile` with their expected JSON (derived from the input record, not from reading
 * the file back), the malformed files, and the manifest. Throws if a malformed vector is not
 * refused with its stated code and reason, so a vector never claims what the reader does not do.
 */
export function rolloutVectorFiles(): VectorFile[] {
  const files: VectorFile[] = [];
  const valid: ManifestEntry[] = validVectorSpecs().map(({ name, about, record }) => {
    const bytes = writeRolloutFile(record);
    const file = `valid/${name}.safetensors`;
    const expected = `valid/${name}.json`;
    files.push(
      { path: file, bytes },
      { path: expected, bytes: text(prettyJson(rolloutFileJson(record))) },
    );
    return { name, about, file, sha256: sha256(bytes), expected };
  });
  const invalid: ManifestEntry[] = invalidVectorSpecs().map(
    ({ name, about, code, reason, bytes }) => {
      const got = refusal(bytes);
      if (got?.code !== code || got.reason !== reason) {
        throw new Error(
          `vector ${name}: expected ${code}/${reason}, the reader gave ${JSON.stringify(got)}`,
        );
      }
      const file = `invalid/${name}.safetensors`;
      files.push({ path: file, bytes });
      return { name, about, file, sha256: sha256(bytes), code, reason };
    },
  );
  const manifest: VectorManifest = {
    format: ROLLOUT_FORMAT,
    format_version: ROLLOUT_FORMAT_VERSION,
    spec: 'docs/formats/rollout-file-v1.md',
    valid,
    invalid,
  };
  files.push({ path: 'manifest.json', bytes: text(JSON.stringify(manifest, null, 2)) });
  return files;
}
