#!/usr/bin/env node
// The `flowfleet` executable. After `npm run build` it runs the compiled CLI (dist/); in a source
// checkout it runs the TypeScript sources through tsx with the @flowfleet/source condition (what
// `npm run flowfleet` does).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = new URL('../dist/main.js', import.meta.url);
if (existsSync(fileURLToPath(dist))) {
  await import(dist.href);
} else {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', tsx, '--conditions=@flowfleet/source', main, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  // Relay signals sent to this wrapper. A terminal's Ctrl-C reaches both processes; the CLI
  // counts two signals within 500 ms as one.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? 128 + (signal === null ? 1 : (constants.signals[signal] ?? 1));
  });
}
