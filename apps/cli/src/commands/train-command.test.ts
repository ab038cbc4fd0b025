// `flowfleet train` without a usable Python: one clear line and exit 1 before anything starts (no
// fleet is brought up: its "local fleet up" line would be on stderr). The full path —
// a fleet, train.py against it, the fleet stopped — is python/tests/test_flowgrpo_cli.py.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../program.js';
import { trainerPython, VENV_PYTHON } from './train-command.js';

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (text) => (out += text),
    err: (text) => (err += text),
    isTTY: false,
    columns: 100,
    env,
    signal: new AbortController().signal,
    forceSignal: new AbortController().signal,
  });
  return { code, out, err };
}

describe('flowfleet train without a Python', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowfleet-train-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the missing virtualenv and how to make it, in one line, exit 1', async () => {
    const missing = join(dir, 'no-venv');
    await expect(trainerPython({}, { env: {} }, missing)).rejects.toSatisfy(
      (error: unknown) =>
        isFlowfleetError(error, 'CLI_PYTHON_MISSING') &&
        error.message.includes(join(missing, VENV_PYTHON)) &&
        error.message.includes('npm run setup:python'),
    );
  });

  it('refuses a --python (or FLOWFLEET_PYTHON) that is not executable, before starting a fleet', async () => {
    const notExecutable = join(dir, 'python');
    await writeFile(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    const byFlag = await run(['train', '--python', notExecutable, '--iterations', '2']);
    expect(byFlag.code).toBe(1);
    expect(byFlag.out).toBe('');
    expect(byFlag.err).toBe(
      `flowfleet train: CLI_PYTHON_MISSING: ${notExecutable} is not an executable Python\n`,
    );
    const byEnv = await run(['train', '--iterations', '2'], { FLOWFLEET_PYTHON: notExecutable });
    expect(byEnv.code).toBe(1);
    expect(byEnv.err).toContain('CLI_PYTHON_MISSING');
  });

  it('takes an executable --python as it is', async () => {
    const python = join(dir, 'ok-python');
    await writeFile(python, '#!/bin/sh\n', { mode: 0o755 });
    await expect(trainerPython({ python }, { env: {} })).resolves.toBe(python);
  });
});
