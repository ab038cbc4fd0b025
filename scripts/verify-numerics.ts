// `npm run verify-numerics -- <vectors.json>`: checks @flowfleet/numerics against a vectors file
// in the golden format. A thin wrapper: the logic lives in runVerifyNumerics (reused by the CLI).
import { readFile } from 'node:fs/promises';
import { runVerifyNumerics } from '@flowfleet/numerics';

try {
  process.exitCode = await runVerifyNumerics(process.argv.slice(2), {
    readFile: (path) => readFile(path, 'utf8'),
    stdout: (line) => console.log(line),
    stderr: (line) => console.error(line),
  });
} catch (error) {
  // A defect, not a verdict: keep it apart from exit 1 ("some case failed").
  console.error('verify-numerics: internal error:', error);
  process.exitCode = 3;
}
