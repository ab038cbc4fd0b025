import { canonicalJson } from '../../canonical-json.js';
import { file, METADATA, R, strings, tensors, type InvalidVectorSpec } from './vector-parts.js';

/** Malformed vectors that break a rollout-file rule (FMT_ROLLOUT_INVALID). */
export function rolloutVectors(): InvalidVectorSpec[] {
  const meta = (patch: Record<string, unknown>) => strings({ ...METADATA, ...patch });
  const without = (key: string) =>
    strings(Object.fromEntries(Object.entries(METADATA).filter(([k]) => k !== key)));
  const odeTensors = Object.fromEntries(
    Object.entries(tensors()).filter(([name]) => name !== 'log_probs'),
  );
  const t = tensors;
  return [
    {
      name: 'not-rollout',
      about: '__metadata__.format is another format',
      code: R,
      reason: 'not-rollout',
      bytes: file(t(), { ...strings(), format: 'flowfleet.other' }),
    },
    {
      name: 'no-metadata',
      about: 'no __metadata__ at all (a plain safetensors file)',
      code: R,
      reason: 'not-rollout',
      bytes: file(t(), {}),
    },
    {
      name: 'unsupported-version',
      about: 'format_version "3" (no reader of this code knows it; "2" is RolloutFile v2)',
      code: R,
      reason: 'unsupported-version',
      bytes: file(t(), { ...strings(), format_version: '3' }),
    },
    {
      name: 'metadata-keys',
      about: 'a fourth __metadata__ key',
      code: R,
      reason: 'metadata-keys',
      bytes: file(t(), { ...strings(), note: 'x' }),
    },
    {
      name: 'rollout-not-json',
      about: '__metadata__.rollout is not JSON',
      code: R,
      reason: 'rollout-not-json',
      bytes: file(t(), { ...strings(), rollout: '{"steps":' }),
    },
    {
      name: 'rollout-duplicate-key',
      about: '__metadata__.rollout names "steps" twice',
      code: R,
      reason: 'rollout-not-json',
      bytes: file(t(), {
        ...strings(),
        rollout: canonicalJson(METADATA).replace('"steps":2', '"steps":2,"steps":3'),
      }),
    },
    {
      name: 'rollout-not-object',
      about: '__metadata__.rollout is a JSON array',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), { ...strings(), rollout: '[]' }),
    },
    {
      name: 'missing-field',
      about: 'the record has no steps',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), without('steps')),
    },
    {
      name: 'empty-latent-dims',
      about: 'latentDims is []',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ latentDims: [] })),
    },
    {
      name: 'zero-latent-dim',
      about: 'latentDims has a 0',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ latentDims: [2, 0] })),
    },
    {
      name: 'unknown-sampler',
      about: 'sampler "euler"',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ sampler: 'euler' })),
    },
    {
      name: 'unknown-cfg-rule',
      about: 'cfgRule "always", not one of the two rule names',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ cfgRule: 'always' })),
    },
    {
      name: 'reserved-key',
      about: 'the record carries "worker", a per-attempt summary field',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ worker: 'w1' })),
    },
    {
      name: 'fractional-steps',
      about: 'steps 2.5',
      code: R,
      reason: 'rollout-schema',
      bytes: file(t(), meta({ steps: 2.5 })),
    },
    {
      name: 'sde-without-log-probs',
      about: 'an sde file without log_probs',
      code: R,
      reason: 'missing-tensor',
      bytes: file(odeTensors),
    },
    {
      name: 'ode-with-log-probs',
      about: 'an ode file with a log_probs tensor (ode has none, not zeros)',
      code: R,
      reason: 'unexpected-tensor',
      bytes: file(t(), meta({ sampler: 'ode' })),
    },
    {
      name: 'extra-tensor',
      about: 'a tensor v1 does not define',
      code: R,
      reason: 'unexpected-tensor',
      bytes: file({ ...t(), noise: { dtype: 'F32', shape: [1], data: Float32Array.of(0) } }),
    },
    {
      name: 'tensor-dtype',
      about: 'sigmas stored as F32',
      code: R,
      reason: 'tensor-dtype',
      bytes: file({
        ...t(),
        sigmas: { dtype: 'F32', shape: [3], data: Float32Array.of(1, 0.6, 0) },
      }),
    },
    {
      name: 'timesteps-t-plus-1',
      about: 'timesteps with T+1 entries (the file has T)',
      code: R,
      reason: 'tensor-shape',
      bytes: file({
        ...t(),
        timesteps: { dtype: 'F64', shape: [3], data: Float64Array.of(1000, 600, 0) },
      }),
    },
    {
      name: 'log-probs-sample-major',
      about: 'log_probs as [G, T] = [2, 3] in a T=3, G=2 file (v1 is step-major [T, G])',
      code: R,
      reason: 'tensor-shape',
      bytes: file(
        { ...t(3, 2), log_probs: { dtype: 'F64', shape: [2, 3], data: new Float64Array(6) } },
        meta({ steps: 3 }),
      ),
    },
    {
      name: 'latent-dims-mismatch',
      about: 'latents shape disagrees with latentDims',
      code: R,
      reason: 'tensor-shape',
      bytes: file(t(), meta({ latentDims: [4] })),
    },
    {
      name: 'nan-latent',
      about: 'a NaN in latents',
      code: R,
      reason: 'non-finite',
      bytes: file({
        ...t(),
        latents: {
          dtype: 'F32',
          shape: [3, 2, 2, 2],
          data: Float32Array.from({ length: 24 }, (_, i) => (i === 5 ? NaN : 0)),
        },
      }),
    },
    {
      name: 'infinite-log-prob',
      about: '-Infinity in log_probs',
      code: R,
      reason: 'non-finite',
      bytes: file({
        ...t(),
        log_probs: { dtype: 'F64', shape: [2, 2], data: Float64Array.of(-1, -Infinity, -1, -1) },
      }),
    },
    {
      name: 'negative-seed',
      about: 'seed -1',
      code: R,
      reason: 'seed-range',
      bytes: file({ ...t(), seeds: { dtype: 'I64', shape: [2], data: BigInt64Array.of(1n, -1n) } }),
    },
    {
      name: 'seed-2-53',
      about: 'seed 2^53, past the range JSON numbers carry exactly',
      code: R,
      reason: 'seed-range',
      bytes: file({
        ...t(),
        seeds: { dtype: 'I64', shape: [2], data: BigInt64Array.of(2n ** 53n, 1n) },
      }),
    },
  ];
}
