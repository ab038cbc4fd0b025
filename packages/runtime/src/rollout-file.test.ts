import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isFlowfleetError } from '@flowfleet/errors';
import { readSafetensors, writeSafetensors } from '@flowfleet/models';
import { describe, expect, it } from 'vitest';
import { readRolloutResult, writeRolloutResult } from './rollout-file.js';
import type { RolloutResult } from './rollout-result.js';

function result(): RolloutResult {
  const t = 2;
  const g = 2;
  const n = 1 * 1 * 2 * 2;
  return {
    model: 'wan21-mini',
    loopId: 'diffusion_denoise',
    prompt: 'p',
    negativePrompt: '',
    sampler: 'sde',
    steps: t,
    group: g,
    latentDims: [1, 1, 2, 2],
    seeds: [1, 2 ** 53 - 1],
    noiseLevel: 0.7,
    guidanceScale: 4.5,
    shift: 3,
    latents: Float32Array.from({ length: (t + 1) * g * n }, (_, i) => Math.fround(i / 7)),
    logProbs: Float64Array.of(-1 / 3, -2 / 3, Math.PI, -1e-300),
    sigmas: Float64Array.of(1, 0.6, 0),
    timesteps: Float64Array.of(1000, 600),
    stepIndices: Int32Array.of(0, 1),
    weightsVersions: { dit: 3, text_encoder: 1 },
    backend: { dit: 'ort-cpu', text_encoder: 'ort-cpu' },
    platform: { device: 'cpu', arch: 'x86-64-v3' },
    interceptors: [],
    captureStats: {
      captures: 2,
      replays: 1,
      eagerBreaks: 0,
      eagerBreakReasons: { 'not-capturable': 0, override: 0, 'no-graph-fn': 0 },
      eagerSteps: 0,
      evictions: 0,
      liveGraphs: 0,
      bytesHeld: 0,
      captureMs: 1.5,
    },
    timings: { totalMs: 10, encodeMs: 1, denoiseMs: 9, captureMs: 1.5, stepMs: [5, 4] },
  };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : String(error);
  }
  return undefined;
}

describe('rollout file', () => {
  it('round-trips every field exactly (float64 log-probs and 53-bit seeds included)', () => {
    const original = result();
    const bytes = writeRolloutResult(original);
    const headerBytes = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerBytes % 8).toBe(0);
    expect(readRolloutResult(bytes)).toEqual(original);
  });

  it('is a safetensors file with the documented tensors', () => {
    const bytes = writeRolloutResult(result());
    const headerBytes = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    const header = JSON.parse(
      new TextDecoder().decode(bytes.subarray(8, 8 + headerBytes)),
    ) as Record<string, { dtype: string; shape: number[] }>;
    expect(Object.keys(header).sort()).toEqual([
      '__metadata__',
      'latents',
      'log_probs',
      'seeds',
      'sigmas',
      'step_indices',
      'timesteps',
    ]);
    expect(header['latents']).toMatchObject({ dtype: 'F32', shape: [3, 2, 1, 1, 2, 2] });
    expect(header['log_probs']).toMatchObject({ dtype: 'F64', shape: [2, 2] });
    expect(header['seeds']).toMatchObject({ dtype: 'I64', shape: [2] });
  });

  it('rejects truncated, foreign and inconsistent files with RT_RESULT_INVALID', () => {
    const bytes = writeRolloutResult(result());
    expect(codeOf(() => readRolloutResult(bytes.subarray(0, bytes.length - 8)))).toBe(
      'RT_RESULT_INVALID',
    );
    expect(codeOf(() => readRolloutResult(bytes.subarray(0, 4)))).toBe('RT_RESULT_INVALID');
    const foreign = new TextEncoder().encode('{"__metadata__":{"format":"other"}}');
    const file = new Uint8Array(8 + foreign.length);
    new DataView(file.buffer).setBigUint64(0, BigInt(foreign.length), true);
    file.set(foreign, 8);
    expect(codeOf(() => readRolloutResult(file))).toBe('RT_RESULT_INVALID');
    expect(codeOf(() => writeRolloutResult({ ...result(), logProbs: new Float64Array(3) }))).toBe(
      'RT_RESULT_INVALID',
    );
  });
});

describe('rollout file bytes', () => {
  it('are the bytes the format-version-1 encoder wrote for the same result', () => {
    // testdata/rollout-v1.safetensors was written from result() by the runtime's own encoder
    // before the file moved onto the models safetensors codec; the format must not drift.
    const previous = new Uint8Array(
      readFileSync(fileURLToPath(new URL('./testdata/rollout-v1.safetensors', import.meta.url))),
    );
    const bytes = writeRolloutResult(result());
    expect(bytes.length).toBe(previous.length);
    expect(Buffer.from(bytes).equals(Buffer.from(previous))).toBe(true);
    expect(readRolloutResult(previous)).toEqual(result());
  });

  it('rejects a file whose float64 tensor was stored as another dtype', () => {
    const { metadata, tensors } = readSafetensors(writeRolloutResult(result()), {
      keepFloat64: true,
    });
    const logProbs = tensors.get('log_probs')!;
    tensors.set('log_probs', {
      dtype: 'float32',
      dims: logProbs.dims,
      data: Float32Array.from(logProbs.data as Float64Array),
    });
    const error = (() => {
      try {
        readRolloutResult(writeSafetensors(tensors, metadata));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isFlowfleetError(error, 'RT_RESULT_INVALID')).toBe(true);
    expect((error as Error).message).toContain('log_probs is F32, expected F64');
  });

  it('reports a malformed layout as RT_RESULT_INVALID with the codec error as its cause', () => {
    const bytes = writeRolloutResult(result());
    const trailing = new Uint8Array(bytes.length + 8);
    trailing.set(bytes);
    let error: unknown;
    try {
      readRolloutResult(trailing);
    } catch (e) {
      error = e;
    }
    expect(isFlowfleetError(error, 'RT_RESULT_INVALID')).toBe(true);
    expect(isFlowfleetError((error as Error).cause, 'MODEL_SAFETENSORS_INVALID')).toBe(true);
  });
});
