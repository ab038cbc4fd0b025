import { rawSafetensors } from '../raw-safetensors.js';
import {
  edited,
  file,
  headerText,
  parts,
  S,
  tensors,
  withLength,
  type InvalidVectorSpec,
} from './vector-parts.js';

/** Malformed vectors that break a safetensors container rule (FMT_SAFETENSORS_INVALID). */
export function containerVectors(): InvalidVectorSpec[] {
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
