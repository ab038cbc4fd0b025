import type { SafetensorsTensor } from '../../safetensors/dtypes.js';
import type { SafetensorsInvalidReason } from '../../safetensors/safetensors-error.js';
import { rawSafetensors } from '../../safetensors/raw-safetensors.js';
import { writeSafetensors } from '../../safetensors/write-safetensors.js';
import { canonicalJson } from '../../canonical-json.js';
import type { RolloutInvalidReason } from '../rollout-error.js';
import type { RolloutMetadata } from '../rollout-metadata.js';

/** A malformed vector: bytes a reader must refuse, with the code and reason it must give. */
export interface InvalidVectorSpec {
  readonly name: string;
  readonly about: string;
  readonly code: 'FMT_SAFETENSORS_INVALID' | 'FMT_ROLLOUT_INVALID';
  readonly reason: SafetensorsInvalidReason | RolloutInvalidReason;
  readonly bytes: Uint8Array;
}

type Tensors = Record<string, SafetensorsTensor>;

const METADATA: RolloutMetadata = {
  model: 'wan21-mini',
  loopId: 'wan21.denoise',
  prompt: 'p',
  negativePrompt: '',
  sampler: 'sde',
  steps: 2,
  group: 2,
  latentDims: [2, 2],
  noiseLevel: 0.7,
  guidanceScale: 1,
  shift: 3,
  weightsVersions: { dit: 1 },
  backend: { dit: 'cpu-reference' },
  platform: { device: 'cpu', arch: 'generic' },
  interceptors: [],
};

/** The tensors of a valid file with METADATA and T steps, G samples (latent [2, 2]). */
function tensors(t = 2, g = 2): Tensors {
  const sigmas = Float64Array.from({ length: t + 1 }, (_, i) => 1 - i / t);
  return {
    latents: {
      dtype: 'F32',
      shape: [t + 1, g, 2, 2],
      data: Float32Array.from({ length: (t + 1) * g * 4 }, (_, i) => i / 8),
    },
    log_probs: {
      dtype: 'F64',
      shape: [t, g],
      data: Float64Array.from({ length: t * g }, (_, i) => -1.5 - i),
    },
    seeds: {
      dtype: 'I64',
      shape: [g],
      data: BigInt64Array.from({ length: g }, (_, i) => BigInt(i + 1)),
    },
    sigmas: { dtype: 'F64', shape: [t + 1], data: sigmas },
    step_indices: { dtype: 'I32', shape: [t], data: Int32Array.from({ length: t }, (_, i) => i) },
    timesteps: { dtype: 'F64', shape: [t], data: sigmas.slice(0, t).map((s) => 1000 * s) },
  };
}

function strings(metadata: unknown = METADATA): Record<string, string> {
  return { format: 'flowfleet.rollout', format_version: '1', rollout: canonicalJson(metadata) };
}

/** A file written by the codec with these tensors and `__metadata__` strings. */
function file(t: Tensors = tensors(), meta: Record<string, string> = strings()): Uint8Array {
  return writeSafetensors(t, meta);
}

/** A valid file's header object and data section, to edit and reassemble with `rawSafetensors`. */
function parts(): { header: Record<string, Record<string, unknown>>; data: Uint8Array } {
  const bytes = file();
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<
    string,
    Record<string, unknown>
  >;
  return { header, data: bytes.slice(8 + n) };
}

function edited(
  edit: (header: Record<string, Record<string, unknown>>) => void,
  data?: Uint8Array,
) {
  const p = parts();
  edit(p.header);
  return rawSafetensors(p.header, data ?? p.data);
}

function withLength(length: bigint): Uint8Array {
  const bytes = file().slice();
  new DataView(bytes.buffer).setBigUint64(0, length, true);
  return bytes;
}

function headerText(edit: (text: string) => string): Uint8Array {
  const p = parts();
  return rawSafetensors(edit(JSON.stringify(p.header)), p.data);
}

const S = 'FMT_SAFETENSORS_INVALID';
const R = 'FMT_ROLLOUT_INVALID';

function safetensorsLayer(): InvalidVectorSpec[] {
  const p = parts();
  const shifted = (delta: number) => (entry: Record<string, unknown>) => {
    const [b, e] = entry['data_offsets'] as [number, number];
    entry['data_offsets'] = [b + delta, e + delta];
  };
  return [
    {
      name: 'too-short',
      about: '7 bytes: less than the 8-byte header length',
      code: S,
      reason: 'too-short',
      bytes: file().slice(0, 7),
    },
    {
      name: 'header-too-large',
      about: 'header length 100000008, over the 100 MB bound',
      code: S,
      reason: 'header-too-large',
      bytes: withLength(100_000_008n),
    },
    {
      name: 'header-out-of-bounds',
      about: 'header length runs past the end of the file',
      code: S,
      reason: 'header-out-of-bounds',
      bytes: withLength(BigInt(file().length)),
    },
    {
      name: 'header-not-utf8',
      about: 'a 0xFF byte inside the header',
      code: S,
      reason: 'header-not-utf8',
      bytes: rawSafetensors('', p.data, {
        headerBytes: Uint8Array.from([
          ...new TextEncoder().encode(JSON.stringify(p.header).slice(0, -1)),
          0xff,
          0x7d,
        ]),
      }),
    },
    {
      name: 'header-not-json',
      about: 'the header JSON is cut short',
      code: S,
      reason: 'header-not-json',
      bytes: headerText((t) => `${t.slice(0, -1)} `),
    },
    {
      name: 'header-not-object',
      about: 'the header starts with a space instead of {',
      code: S,
      reason: 'header-not-object',
      bytes: headerText((t) => ` ${t}`),
    },
    {
      name: 'duplicate-tensor',
      about: 'the tensor name "seeds" appears twice in the header',
      code: S,
      reason: 'duplicate-key',
      bytes: headerText((t) =>
        t.replace('"seeds":', `"seeds":${JSON.stringify(p.header['seeds'])},"seeds":`),
      ),
    },
    {
      name: 'empty-name',
      about: 'a zero-size tensor with the empty name',
      code: S,
      reason: 'empty-name',
      bytes: edited((h) => {
        h[''] = { dtype: 'U8', shape: [0], data_offsets: [0, 0] };
      }),
    },
    {
      name: 'metadata-not-strings',
      about: '__metadata__.format_version is the number 1',
      code: S,
      reason: 'metadata-not-strings',
      bytes: edited((h) => {
        h['__metadata__']!['format_version'] = 1;
      }),
    },
    {
      name: 'entry-invalid',
      about: 'a tensor entry with a fourth key',
      code: S,
      reason: 'entry-invalid',
      bytes: edited((h) => {
        h['seeds']!['offsets'] = [0, 16];
      }),
    },
    {
      name: 'unsupported-dtype',
      about: 'seeds has dtype U64, which v1 does not support',
      code: S,
      reason: 'unsupported-dtype',
      bytes: edited((h) => {
        h['seeds']!['dtype'] = 'U64';
      }),
    },
    {
      name: 'invalid-shape',
      about: 'a negative dimension',
      code: S,
      reason: 'invalid-shape',
      bytes: edited((h) => {
        h['seeds']!['shape'] = [-2];
      }),
    },
    {
      name: 'invalid-offsets',
      about: 'data_offsets with three entries',
      code: S,
      reason: 'invalid-offsets',
      bytes: edited((h) => {
        h['seeds']!['data_offsets'] = [0, 8, 16];
      }),
    },
    {
      name: 'size-mismatch',
      about: 'latents claims [3, 2, 2, 3]: 36 F32 values for a 96-byte span',
      code: S,
      reason: 'size-mismatch',
      bytes: edited((h) => {
        h['latents']!['shape'] = [3, 2, 2, 3];
      }),
    },
    {
      name: 'gap',
      about: '8 unused bytes before the first tensor',
      code: S,
      reason: 'gap',
      bytes: edited(
        (h) => Object.entries(h).forEach(([k, e]) => k !== '__metadata__' && shifted(8)(e)),
        Uint8Array.from([...new Uint8Array(8), ...p.data]),
      ),
    },
    {
      name: 'overlap',
      about: 'log_probs starts 8 bytes inside latents',
      code: S,
      reason: 'overlap',
      bytes: edited((h) => shifted(-8)(h['log_probs']!)),
    },
    {
      name: 'truncated',
      about: 'the last 4 data bytes are missing',
      code: S,
      reason: 'truncated',
      bytes: rawSafetensors(p.header, p.data.slice(0, -4)),
    },
    {
      name: 'trailing-bytes',
      about: '8 bytes after the last tensor',
      code: S,
      reason: 'trailing-bytes',
      bytes: rawSafetensors(p.header, Uint8Array.from([...p.data, ...new Uint8Array(8)])),
    },
    {
      name: 'invalid-bool',
      about:
        'a BOOL tensor (the last in the file) holding the byte 2: refused before the tensor set is checked',
      code: S,
      reason: 'invalid-bool',
      bytes: file({
        ...tensors(),
        zmask: { dtype: 'BOOL', shape: [1], data: Uint8Array.of(1) },
      }).map((b, i, all) => (i === all.length - 1 ? 2 : b)),
    },
  ];
}

function rolloutLayer(): InvalidVectorSpec[] {
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
      about: 'format_version "2"',
      code: R,
      reason: 'unsupported-version',
      bytes: file(t(), { ...strings(), format_version: '2' }),
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

/** The malformed vectors of RolloutFile v1, each breaking exactly one rule. */
export function invalidVectorSpecs(): InvalidVectorSpec[] {
  return [...safetensorsLayer(), ...rolloutLayer()];
}
