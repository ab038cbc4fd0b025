// Writes the RolloutFile v1 test vectors (docs/formats/vectors/rollout-file-v1/) from their
// definitions in packages/formats/test-support/rollout-vectors/. Never edit the generated files by hand:
// change the definitions and run `npm run vectors:rollout`; a test fails while the checked-in
// files differ from what this script writes.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ROLLOUT_VECTORS_DIR,
  rolloutVectorFiles,
} from '../test-support/rollout-vectors/rollout-vectors.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dir = join(root, ROLLOUT_VECTORS_DIR);
const files = rolloutVectorFiles();
await rm(dir, { recursive: true, force: true });
for (const { path, bytes } of files) {
  await mkdir(dirname(join(dir, path)), { recursive: true });
  await writeFile(join(dir, path), bytes);
}
console.log(`wrote ${files.length} files to ${ROLLOUT_VECTORS_DIR}`);
