import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { wan21MiniCard } from '../wan21/wan21-mini-card.js';
import { initWeights } from '../wan21/init-weights.js';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { exportOnnx, type ExportOnnxOptions } from './export-onnx.js';
import { parseExportOnnxArgs } from './export-onnx-args.js';
import type { OnnxArtifacts } from '../wan21/onnx/onnx-artifacts.js';

function codeOf(options: ExportOnnxOptions): string | undefined {
  try {
    exportOnnx(options);
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not-flowfleet';
  }
  return undefined;
}

describe('exportOnnx', () => {
  it('eager by default: symbolic dims, weights as inputs', () => {
    const result = exportOnnx({ model: 'wan21-mini' });
    expect(result).toMatchObject({ component: 'dit', form: 'eager', weightsSource: 'inputs' });
    expect(decodeOnnxModelSummary(result.bytes).initializers).toEqual([]);
  });

  it('captured without weights bakes the deterministic init at the card latent defaults', () => {
    const result = exportOnnx({ model: 'wan21-mini', form: 'captured', seed: 3 });
    expect(result).toMatchObject({
      weightsSource: 'init',
      seed: 3,
      dims: { batch: 1, frames: 4, height: 16, width: 16 },
    });
    const given = exportOnnx({
      model: 'wan21-mini',
      form: 'captured',
      // A combined file's text-encoder tensors are dropped for the DiT.
      weights: new Map([
        ...initWeights(wan21MiniCard.config, 3, 'dit'),
        ...initWeights(wan21MiniCard.config, 3, 'text_encoder'),
      ]),
    });
    expect(given.weightsSource).toBe('given');
    expect(Buffer.from(given.bytes).equals(Buffer.from(result.bytes))).toBe(true);
  });

  it('rejects unknown models, components, forms and options that do not fit the form', () => {
    expect(codeOf({ model: 'wan99' })).toBe('MODEL_UNKNOWN_CARD');
    expect(codeOf({ model: 'wan21-mini', component: 'vae' as 'dit' })).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    expect(codeOf({ model: 'wan21-mini', form: 'lazy' as 'eager' })).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    expect(codeOf({ model: 'wan21-mini', batch: 2 })).toBe('MODEL_ONNX_OPTIONS_INVALID');
    expect(
      codeOf({ model: 'wan21-mini', component: 'text_encoder', form: 'captured', frames: 4 }),
    ).toBe('MODEL_ONNX_OPTIONS_INVALID');
  });
});

describe('wan21-mini card ONNX artifacts', () => {
  const artifacts = (id: string): OnnxArtifacts =>
    wan21MiniCard.components.find((c) => c.id === id)?.artifacts as OnnxArtifacts;

  it('gives each component a builder, the eager extra inputs and the captured dims', () => {
    const dit = artifacts('dit');
    const latent = [2, 4, 2, 8, 12];
    const extra = dit.onnxEagerInputs({ latent, timestep: [2], context: [2, 16, 64] });
    expect(Object.keys(extra)).toEqual(['rope_cos', 'rope_sin']);
    expect(extra['rope_cos']?.dims).toEqual([2 * 4 * 6, 16]);
    expect(dit.onnxCapturedDims({ latent })).toEqual({ batch: 2, frames: 2, height: 8, width: 12 });
    expect(decodeOnnxModelSummary(dit.buildOnnx({ form: 'eager' })).outputs[0]?.name).toBe(
      'velocity',
    );
    const te = artifacts('text_encoder');
    expect(te.onnxEagerInputs({ tokens: [3, 16] })).toEqual({});
    expect(te.onnxCapturedDims({ tokens: [3, 16] })).toEqual({ batch: 3 });
    expect(decodeOnnxModelSummary(te.buildOnnx({ form: 'eager' })).outputs[0]?.name).toBe(
      'context',
    );
  });
});

describe('parseExportOnnxArgs', () => {
  const codeOfArgs = (argv: string[]): string | undefined => {
    try {
      parseExportOnnxArgs(argv);
    } catch (error) {
      return isFlowfleetError(error) ? error.code : 'not-flowfleet';
    }
    return undefined;
  };

  it('parses every flag', () => {
    expect(
      parseExportOnnxArgs([
        '--model',
        'wan21-mini',
        '--out',
        'a.onnx',
        '--component',
        'text_encoder',
        '--form',
        'captured',
        '--weights',
        'w.safetensors',
        '--seed',
        '0',
        '--batch',
        '2',
      ]),
    ).toEqual({
      model: 'wan21-mini',
      out: 'a.onnx',
      component: 'text_encoder',
      form: 'captured',
      weightsPath: 'w.safetensors',
      seed: 0,
      batch: 2,
    });
    expect(parseExportOnnxArgs(['--model', 'm', '--out', 'o'])).toEqual({
      model: 'm',
      out: 'o',
      component: 'dit',
      form: 'eager',
    });
    expect(parseExportOnnxArgs(['--help'])).toBe('help');
  });

  it('rejects unknown flags, missing required flags and bad values', () => {
    const ok = ['--model', 'm', '--out', 'o'];
    for (const argv of [
      [...ok, '--bogus'],
      [...ok, 'positional'],
      ['--model', 'm'],
      ['--out', 'o'],
      [...ok, '--form', 'lazy'],
      [...ok, '--component', 'vae'],
      [...ok, '--batch', '0'],
      [...ok, '--height', '1.5'],
      [...ok, '--seed', '-1'],
    ]) {
      expect(codeOfArgs(argv), argv.join(' ')).toBe('MODEL_ONNX_OPTIONS_INVALID');
    }
  });
});
