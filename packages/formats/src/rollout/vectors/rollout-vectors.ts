import { createHash } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import { readRolloutFile } from '../read-rollout-file.js';
import { prettyJson, rolloutFileJson } from '../rollout-json.js';
import { ROLLOUT_FORMAT, type RolloutFormatVersion } from '../rollout-metadata.js';
import { writeRolloutFile } from '../write-rollout-file.js';
import { invalidVectorSpecs } from './invalid-vectors.js';
import { invalidV2VectorSpecs } from './v2-invalid-vectors.js';
import { validV2VectorSpecs } from './v2-valid-vectors.js';
import { validVectorSpecs, type ValidVectorSpec } from './valid-vectors.js';
import type { InvalidVectorSpec } from './vector-parts.js';

/** Where the v1 vectors are checked in, relative to the repository root. */
export const ROLLOUT_VECTORS_DIR = 'docs/formats/vectors/rollout-file-v1';

/** One version's vector set: where it lives, its spec, and its definitions. */
export interface RolloutVectorSet {
  readonly version: RolloutFormatVersion;
  readonly dir: string;
  readonly spec: string;
  readonly valid: () => ValidVectorSpec[];
  readonly invalid: () => InvalidVectorSpec[];
}

/** The vector sets, one per format version; a v2 reader passes both. */
export const ROLLOUT_VECTOR_SETS: readonly RolloutVectorSet[] = [
  {
    version: '1',
    dir: ROLLOUT_VECTORS_DIR,
    spec: 'docs/formats/rollout-file-v1.md',
    valid: validVectorSpecs,
    invalid: invalidVectorSpecs,
  },
  {
    version: '2',
    dir: 'docs/formats/vectors/rollout-file-v2',
    spec: 'docs/formats/rollout-file-v2.md',
    valid: validV2VectorSpecs,
    invalid: invalidV2VectorSpecs,
  },
];

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
 * Every file of one version's test vectors (default v1), computed: the valid files written by
 * `writeRolloutFile` with their expected JSON (derived from the input record, not from reading
 * the file back), the malformed files, and the manifest. Throws if a malformed vector is not
 * refused with its stated code and reason, so a vector never claims what the reader does not do.
 */
export function rolloutVectorFiles(set: RolloutVectorSet = ROLLOUT_VECTOR_SETS[0]!): VectorFile[] {
  const files: VectorFile[] = [];
  const valid: ManifestEntry[] = set.valid().map(({ name, about, record }) => {
    const bytes = writeRolloutFile(record);
    const file = `valid/${name}.safetensors`;
    const expected = `valid/${name}.json`;
    files.push(
      { path: file, bytes },
      { path: expected, bytes: text(prettyJson(rolloutFileJson(record))) },
    );
    return { name, about, file, sha256: sha256(bytes), expected };
  });
  const invalid: ManifestEntry[] = set.invalid().map(({ name, about, code, reason, bytes }) => {
    const got = refusal(bytes);
    if (got?.code !== code || got.reason !== reason) {
      throw new Error(
        `vector ${name}: expected ${code}/${reason}, the reader gave ${JSON.stringify(got)}`,
      );
    }
    const file = `invalid/${name}.safetensors`;
    files.push({ path: file, bytes });
    return { name, about, file, sha256: sha256(bytes), code, reason };
  });
  const manifest: VectorManifest = {
    format: ROLLOUT_FORMAT,
    format_version: set.version,
    spec: set.spec,
    valid,
    invalid,
  };
  files.push({ path: 'manifest.json', bytes: text(JSON.stringify(manifest, null, 2)) });
  return files;
}
