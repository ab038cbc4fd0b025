import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { readRolloutFile } from '../read-rollout-file.js';
import { rolloutFileJson } from '../rollout-json.js';
import { writeRolloutFile } from '../write-rollout-file.js';
import {
  ROLLOUT_VECTOR_SETS,
  rolloutVectorFiles,
  type RolloutVectorSet,
  type VectorManifest,
} from './rollout-vectors.js';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

async function listFiles(at: string): Promise<string[]> {
  const entries = await readdir(at, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? listFiles(join(at, e.name)) : [join(at, e.name)])),
  );
  return nested.flat();
}

const COVERAGE: Record<string, { valid: string[]; invalid: number }> = {
  '1': { valid: ['sde-cfg', 'ode', 'group-1', 'latent-rank-2', 'extra-metadata'], invalid: 30 },
  '2': {
    valid: [
      'frames-first',
      'frames-every-2-window',
      'window-no-frames',
      'frames-all-group-1',
      'extra-metadata',
    ],
    invalid: 20,
  },
};

describe.each(ROLLOUT_VECTOR_SETS.map((set) => [set.dir, set] as const))(
  'RolloutFile test vectors (%s)',
  async (_, set: RolloutVectorSet) => {
    const dir = join(root, set.dir);
    const manifest = JSON.parse(
      await readFile(join(dir, 'manifest.json'), 'utf8'),
    ) as VectorManifest;
    const vector = async (file: string) => new Uint8Array(await readFile(join(dir, file)));
    defineVectorTests(set, dir, manifest, vector);
  },
);

function defineVectorTests(
  set: RolloutVectorSet,
  dir: string,
  manifest: VectorManifest,
  vector: (file: string) => Promise<Uint8Array>,
): void {
  it('are exactly what the generator writes (run `npm run vectors:rollout` after a change)', async () => {
    const generated = rolloutVectorFiles(set);
    const onDisk = (await listFiles(dir)).map((path) => relative(dir, path)).sort();
    expect(onDisk).toEqual(generated.map((f) => f.path).sort());
    for (const { path, bytes } of generated) {
      expect(Buffer.compare(Buffer.from(await vector(path)), Buffer.from(bytes)), path).toBe(0);
    }
  });

  it('cover what the spec lists (v1: each sampler, G = 1, rank 2, added fields; v2: each frame selection, a window)', () => {
    const { valid, invalid } = COVERAGE[set.version]!;
    expect(manifest.valid.map((v) => v.name)).toEqual(expect.arrayContaining(valid));
    expect(manifest.invalid.length).toBeGreaterThanOrEqual(invalid);
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
}
