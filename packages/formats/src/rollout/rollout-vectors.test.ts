import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { readRolloutFile } from './read-rollout-file.js';
import { rolloutFileJson } from '../../test-support/rollout-vectors/rollout-json.js';
import { writeRolloutFile } from './write-rollout-file.js';
import {
  ROLLOUT_VECTORS_DIR,
  rolloutVectorFiles,
  type VectorManifest,
} from '../../test-support/rollout-vectors/rollout-vectors.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const dir = join(root, ROLLOUT_VECTORS_DIR);
const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as VectorManifest;

async function listFiles(at: string): Promise<string[]> {
  const entries = await readdir(at, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? listFiles(join(at, e.name)) : [join(at, e.name)])),
  );
  return nested.flat();
}

async function vector(file: string): Promise<Uint8Array> {
  return new Uint8Array(await readFile(join(dir, file)));
}

describe('RolloutFile v1 test vectors (docs/formats/vectors/rollout-file-v1)', () => {
  it('are exactly what the generator writes (run `npm run vectors:rollout` after a change)', async () => {
    const generated = rolloutVectorFiles();
    const onDisk = (await listFiles(dir)).map((path) => relative(dir, path)).sort();
    expect(onDisk).toEqual(generated.map((f) => f.path).sort());
    for (const { path, bytes } of generated) {
      expect(Buffer.compare(Buffer.from(await vector(path)), Buffer.from(bytes)), path).toBe(0);
    }
  });

  it('cover each sampler, G = 1, a non-4-D latent and added metadata fields', () => {
    expect(manifest.valid.map((v) => v.name)).toEqual(
      expect.arrayContaining(['sde-cfg', 'ode', 'group-1', 'latent-rank-2', 'extra-metadata']),
    );
    expect(manifest.invalid.length).toBeGreaterThanOrEqual(30);
  });

  it.each(manifest.valid.map((v) => [v.name, v] as const))(
    'reads valid vector %s into its expected JSON, and writes the same bytes back',
    async (_, entry) => {
      const bytes = await vector(entry.file);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(entry.sha256);
      const expected: unknown = JSON.parse(await readFile(join(dir, entry.expected!), 'utf8'));
      const file = readRolloutFile(bytes);
      // toEqual compares numbers with Object.is: -0, subnormals and every last bit must survive.
      expect(rolloutFileJson(file)).toEqual(expected);
      expect(Buffer.from(writeRolloutFile(file)).equals(Buffer.from(bytes))).toBe(true);
    },
  );

  it.each(manifest.invalid.map((v) => [v.name, v] as const))(
    'refuses malformed vector %s with its code and reason',
    async (_, entry) => {
      const bytes = await vector(entry.file);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(entry.sha256);
      let caught: unknown;
      try {
        readRolloutFile(bytes);
      } catch (error) {
        caught = error;
      }
      expect(isFlowfleetError(caught)).toBe(true);
      const error = caught as { code: string; details: { reason: string } };
      expect({ code: error.code, reason: error.details.reason }).toEqual({
        code: entry.code,
        reason: entry.reason,
      });
    },
  );
});
