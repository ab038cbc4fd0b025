import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

// In a fresh process (this one may have loaded ONNX Runtime for other tests): import every ort
// module, check the native binding is not among the loaded shared objects, then load it and check
// it is (the control that shows the check can see it).
const SCRIPT = `
const modules = ['ort-sessions', 'ort-component', 'ort-handler', 'load-ort'];
const loaded = {};
for (const name of modules) Object.assign(loaded, await import(new URL('./' + name + '.ts', process.env.ORT_DIR)));
const binding = () => process.report.getReport().sharedObjects.some((so) => /onnxruntime_binding/.test(so));
const before = binding();
await loaded.loadOrt();
console.log(JSON.stringify({ before, after: binding(), started: loaded.isOrtLoadStarted() }));
`;

describe('lazy loading', () => {
  it('importing the ort modules does not load onnxruntime-node; loadOrt() does', async () => {
    const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'));
    const register = new URL('./dist/esm/api/index.mjs', tsxApi).href;
    const { stdout } = await run(
      process.execPath,
      [
        '--conditions=@flowfleet/source',
        '--input-type=module',
        '-e',
        `const { register } = await import(${JSON.stringify(register)}); register();\n${SCRIPT}`,
      ],
      { env: { ...process.env, ORT_DIR: new URL('./', import.meta.url).href }, timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')).toEqual({
      before: false,
      after: true,
      started: true,
    });
  });
});
