// (c) the export script writes files that a fresh ONNX Runtime session loads and that give the
// same velocity as the in-process build; usage errors exit 2.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { saveWeightsFile } from '@flowfleet/models';
import {
  WAN21_MINI,
  buildDitOnnx,
  createOnnxArtifacts,
  initWeights,
} from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import {
  createSession,
  feedsOf,
  firstBitDifference,
  gaussianTensor,
  runFloat,
} from './ort-harness.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const SCRIPT = join(ROOT, 'scripts', 'export-onnx.ts');

interface ScriptResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function exportScript(args: string[]): Promise<ScriptResult> {
  try {
    const { stdout, stderr } = await run(TSX, ['--conditions=@flowfleet/source', SCRIPT, ...args], {
      cwd: ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const config = WAN21_MINI;
const inputs: Record<string, TensorData> = {
  latent: gaussianTensor(8, 0, [1, config.inChannels, 4, 16, 16]),
  timestep: { dtype: 'float32', dims: [1], data: Float32Array.from([640]) },
  context: gaussianTensor(8, 1, [1, config.textLen, config.textDim]),
};

describe('scripts/export-onnx.ts', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowfleet-onnx-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('exports a captured dit from a weights file that matches the in-process build', async () => {
    const weights = initWeights(config, 5, 'dit');
    const weightsPath = join(dir, 'dit.safetensors');
    await saveWeightsFile(weightsPath, weights);
    const out = join(dir, 'dit-captured.onnx');
    const result = await exportScript([
      '--model',
      'wan21-mini',
      '--out',
      out,
      '--form',
      'captured',
      '--weights',
      weightsPath,
      '--batch',
      '1',
      '--frames',
      '4',
      '--height',
      '16',
      '--width',
      '16',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/deterministic init/);
    const bytes = new Uint8Array(await readFile(out));
    const inProcess = buildDitOnnx(config, {
      form: 'captured',
      weights,
      batch: 1,
      frames: 4,
      height: 16,
      width: 16,
    });
    expect(bytes.length).toBe(inProcess.length);
    const fromFile = await runFloat(await createSession(bytes), feedsOf(inputs), 'velocity');
    const expected = await runFloat(await createSession(inProcess), feedsOf(inputs), 'velocity');
    expect(firstBitDifference(fromFile.data, expected.data)).toBe(-1);
  });

  it('exports an eager dit, and a captured one from the seed-0 init that says so', async () => {
    const out = join(dir, 'dit-eager.onnx');
    const capturedOut = join(dir, 'dit-init.onnx');
    const [eagerRun, capturedRun] = await Promise.all([
      exportScript(['--model', 'wan21-mini', '--out', out]),
      exportScript(['--model', 'wan21-mini', '--out', capturedOut, '--form', 'captured']),
    ]);
    expect(eagerRun.code, eagerRun.stderr).toBe(0);
    expect(eagerRun.stdout).toMatch(/wan21-mini dit eager/);
    expect(capturedRun.code, capturedRun.stderr).toBe(0);
    expect(capturedRun.stderr).toMatch(/deterministic init \(seed 0\)/);
    const bytes = new Uint8Array(await readFile(out));
    expect(decodeOnnxModelSummary(bytes).initializers).toHaveLength(0);
    const weights = initWeights(config, 0, 'dit');
    const extra = createOnnxArtifacts(config, 'dit').eagerInputs({ latent: [1, 4, 4, 16, 16] });
    const eager = await runFloat(
      await createSession(bytes),
      feedsOf({ ...inputs, ...extra }, weights),
      'velocity',
    );
    const baked = await runFloat(
      await createSession(new Uint8Array(await readFile(capturedOut))),
      feedsOf(inputs),
      'velocity',
    );
    expect(firstBitDifference(baked.data, eager.data)).toBe(-1);
  });

  it('exits 2 with a clear message on usage errors', async () => {
    const out = join(dir, 'never.onnx');
    // Argument parsing is unit-tested in packages/models; here: the exit code and the message.
    const cases: [string[], RegExp][] = [
      [['--model', 'wan99', '--out', out], /MODEL_UNKNOWN_CARD/],
      [['--model', 'wan21-mini', '--out', out, '--bogus'], /Unknown option '--bogus'[\s\S]*usage/],
    ];
    const results = await Promise.all(cases.map(([args]) => exportScript(args)));
    results.forEach((result, i) => {
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(cases[i]![1]);
    });
    await expect(readFile(out)).rejects.toThrow();
  });
});
