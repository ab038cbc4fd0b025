// The wan2.1-t2v-1.3b card's DiT graph and parameter names at full size, built and read back
// without running it (no weights are made: the eager graph takes them as inputs): every
// parameter a graph input of its shape, 1,418,996,800 values in all, and every name reachable
// from both published checkpoint layouts.
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import type { OnnxArtifacts } from '@flowfleet/platform';
import { describe, expect, it } from 'vitest';
import { bindCheckpoint } from '../checkpoint/bind-checkpoint.js';
import { diffusersDitKey } from './checkpoint/write-dit-checkpoint.js';
import { shapeSize } from './parameter-shapes.js';
import { wan21T2v13bCard } from './wan21-t2v-1-3b-card.js';

const dit = wan21T2v13bCard.components.find((c) => c.id === 'dit')!;
const shapes = dit.parameterShapes();
const DATA_INPUTS = ['latent', 'timestep', 'context', 'rope_cos', 'rope_sin'];

describe('the wan2.1-t2v-1.3b DiT graph, unrun', () => {
  it('takes every parameter as an input of its shape: 1,418,996,800 values, 825 tensors', () => {
    const onnx = (dit as { onnx?: OnnxArtifacts }).onnx!;
    const summary = decodeOnnxModelSummary(onnx.buildOnnx({ form: 'eager' }));
    expect(summary.initializers.filter((i) => i.rawDataBytes > 1024)).toEqual([]);
    const params = summary.inputs.filter((input) => !DATA_INPUTS.includes(input.name));
    expect(params.map((p) => p.name).sort()).toEqual([...shapes.keys()].sort());
    for (const p of params) expect(p.dims, p.name).toEqual(shapes.get(p.name));
    expect(params.reduce((sum, p) => sum + shapeSize(p.dims as number[]), 0)).toBe(1_418_996_800);
    expect(params).toHaveLength(825);
    expect(summary.inputs.find((i) => i.name === 'context')!.dims).toEqual(['batch', 512, 4096]);
    expect(summary.outputs.map((o) => [o.name, o.dims])).toEqual([
      ['velocity', ['batch', 16, 'frames', 'height', 'width']],
    ]);
  });

  it('refuses to bake 5.7 GB of float32 into one protobuf (the captured form)', () => {
    const onnx = (dit as { onnx?: OnnxArtifacts }).onnx!;
    expect(() =>
      onnx.buildOnnx({
        form: 'captured',
        weights: new Map(),
        inputDims: { latent: [8, 16, 3, 8, 8] },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'MODEL_ONNX_OPTIONS_INVALID',
        details: expect.objectContaining({ weightBytes: 4 * 1_418_996_800 }),
      }),
    );
  });

  it("binds the full key sets of diffusers' and Wan's layouts, under the trainers' prefixes", () => {
    for (const [keyOf, dtype] of [
      [diffusersDitKey, 'BF16'],
      [(name: string) => name, 'F32'],
      [(name: string) => `transformer.${diffusersDitKey(name)}`, 'BF16'],
      [(name: string) => `diffusion_model.${name}`, 'F16'],
    ] as const) {
      const entries = new Map([...shapes].map(([name, shape]) => [keyOf(name), { dtype, shape }]));
      expect(entries.size).toBe(shapes.size);
      const bound = bindCheckpoint(dit, entries);
      expect([...bound.keys()]).toEqual([...shapes.keys()]);
    }
  });
});
