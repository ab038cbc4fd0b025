// First step of `npm test`: stops at once, with one line saying what to install, when a program
// the test tiers need is missing (the tests themselves never skip).
import { describeMissing, missingPrerequisites } from '../test/harness/prerequisites.js';

const missing = missingPrerequisites();
if (missing.length > 0) {
  console.error(describeMissing(missing));
  process.exit(1);
}
