// Writes the RolloutFile test vectors (docs/formats/vectors/rollout-file-v1/ and -v2/) from their
// definitions in packages/formats/src/rollout/vectors/. Never edit the generated files by hand:
// change the definitions and run `npm run vectors:rollout`; a test fails while the checked-in
// files differ from what this script writes.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROLLOUT_VECTOR_SETS, rolloutVectorFiles } from '../src/rollout/vectors/rollout-vectors.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
for (const set of ROLLOUT_VECTOR_SETS) {
  const dir = join(root, set.dir);
  const files = rolloutVectorFiles(set);
  await rm(dir, { recursive: true, force: true });
  for (const { path, bytes } of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), bytes);
  }
  console.log(`wrote ${files.length} files to ${set.dir}`);
}
