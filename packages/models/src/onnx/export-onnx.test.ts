import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { wan21MiniCard } from '../wan21/wan21-mini-card.js';
import { initWeights } from '../wan21/init-weights.js';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { exportOnnx, type ExportOnnxOptions } from './export-onnx.js';
import { parseExportOnnxArgs } from './export-onnx-args.js';

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
    const te = exportOnnx({ model: 'wan21-mini', component: 'text_encoder', form: 'captured' });
    expect(te).toMatchObject({
      component: 'text_encoder',
      weightsSource: 'init',
      dims: { batch: 1 },
    });
    expect(decodeOnnxModelSummary(te.bytes).inputs.map((i) => i.dims)).toEqual([[1, 16]]);
  });

  it('rejects unknown models, components, forms and options that do not fit the form', () => {
    expect(codeOf({ model: 'wan99' })).toBe('MODEL_UNKNOWN_CARD');
    expect(codeOf({ model: 'wan21-mini', component: 'vae' })).toBe('MODEL_ONNX_OPTIONS_INVALID');
    expect(codeOf({ model: 'wan21-mini', form: 'lazy' as 'eager' })).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    expect(codeOf({ model: 'wan21-mini', batch: 2 })).toBe('MODEL_ONNX_OPTIONS_INVALID');
    expect(
      codeOf({ model: 'wan21-mini', component: 'text_encoder', form: 'captured', frames: 4 }),
    ).toBe('MODEL_ONNX_OPTIONS_INVALID');
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
      [...ok, '--batch', '0'],
      [...ok, '--height', '1.5'],
      [...ok, '--seed', '-1'],
    ]) {
      expect(codeOfArgs(argv), argv.join(' ')).toBe('MODEL_ONNX_OPTIONS_INVALID');
    }
  });
});
