// Writes docs/errors.md from the code table in packages/errors (the test keeps them equal).
import { writeFileSync } from 'node:fs';
import { renderErrorsDoc } from '@flowfleet/errors';

const target = new URL('../docs/errors.md', import.meta.url);
writeFileSync(target, renderErrorsDoc());
console.log(`wrote ${target.pathname}`);
