import { compareCodePoints } from '../code-point-order.js';
import { duplicateJsonKey } from './duplicate-json-key.js';
import {
  elementCount,
  isSafetensorsDtype,
  SAFETENSORS_ITEM_BYTES,
  type SafetensorsDtype,
} from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';

/** Upper bound of the JSON header, as in the reference implementation (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** The header key that holds the string-to-string metadata. */
export const METADATA_KEY = '__metadata__';

/** One tensor's header entry. */
export interface SafetensorsEntry {
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** `[begin, end)` of its bytes, relative to the start of the data section. */
  readonly dataOffsets: readonly [number, number];
}

/** A validated header: every entry, the metadata, and where the data section sits in the file. */
export interface SafetensorsHeader {
  /** Entries by tensor name, in name order. */
  readonly tensors: ReadonlyMap<string, SafetensorsEntry>;
  /** The `__metadata__` strings (empty when absent). */
  readonly metadata: Readonly<Record<string, string>>;
  /** Byte offset of the data section in the file: 8 + the header length. */
  readonly dataStart: number;
  /** Byte length of the whole file. */
  readonly fileBytes: number;
}

const ENTRY_KEYS = ['data_offsets', 'dtype', 'shape'];
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The header length N from a file's first 8 bytes (u64 little-endian), checked against the
 * 100 MB bound and against the file's size.
 * @throws FMT_SAFETENSORS_INVALID too-short, header-too-large, header-out-of-bounds
 */
export function readHeaderLength(first8: Uint8Array, fileBytes: number): number {
  if (fileBytes < 8 || first8.length < 8) {
    throw safetensorsInvalid('too-short', 'shorter than the 8-byte header length', { fileBytes });
  }
  const view = new DataView(first8.buffer, first8.byteOffset, 8);
  const length = view.getBigUint64(0, true);
  if (length > BigInt(MAX_HEADER_BYTES)) {
    throw safetensorsInvalid('header-too-large', `header length ${length} is over 100 MB`, {
      headerBytes: String(length),
    });
  }
  const n = Number(length);
  if (8 + n > fileBytes) {
    throw safetensorsInvalid('header-out-of-bounds', `header length ${n} runs past the file`, {
      headerBytes: n,
      fileBytes,
    });
  }
  return n;
}

function parseJson(bytes: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (cause) {
    throw safetensorsInvalid('header-not-utf8', 'the header is not UTF-8', {}, cause);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw safetensorsInvalid('header-not-json', 'the header is not JSON', {}, cause);
  }
  if (!isRecord(value) || !text.startsWith('{')) {
    throw safetensorsInvalid('header-not-object', 'the header is not a JSON object starting at {');
  }
  const duplicate = duplicateJsonKey(text);
  if (duplicate !== undefined) {
    throw safetensorsInvalid('duplicate-key', `key ${JSON.stringify(duplicate)} appears twice`, {
      key: duplicate,
    });
  }
  return value;
}

function parseMetadata(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw safetensorsInvalid('metadata-not-strings', '__metadata__ is not an object of strings');
  }
  return { ...(value as Record<string, string>) };
}

function parseEntry(name: string, value: unknown): SafetensorsEntry {
  if (name === '') throw safetensorsInvalid('empty-name', 'a tensor has the empty name');
  const facts = { tensor: name };
  if (!isRecord(value) || Object.keys(value).sort().join() !== ENTRY_KEYS.join()) {
    throw safetensorsInvalid(
      'entry-invalid',
      `entry ${name} is not {dtype, shape, data_offsets}`,
      facts,
    );
  }
  const { dtype, shape, data_offsets: offsets } = value;
  if (!isSafetensorsDtype(dtype)) {
    throw safetensorsInvalid('unsupported-dtype', `tensor ${name} has dtype ${String(dtype)}`, {
      ...facts,
      dtype: String(dtype),
    });
  }
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw safetensorsInvalid('invalid-shape', `tensor ${name} has a malformed shape`, facts);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    throw safetensorsInvalid('invalid-offsets', `tensor ${name} has malformed data_offsets`, facts);
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) {
    throw safetensorsInvalid('invalid-offsets', `tensor ${name} ends before it begins`, {
      ...facts,
      begin,
      end,
    });
  }
  const expectedBytes = elementCount(shape as number[]) * SAFETENSORS_ITEM_BYTES[dtype];
  if (!Number.isSafeInteger(expectedBytes) || expectedBytes !== end - begin) {
    throw safetensorsInvalid(
      'size-mismatch',
      `tensor ${name}: ${dtype} [${shape.join(', ')}] needs ${expectedBytes} bytes, data_offsets span ${end - begin}`,
      { ...facts, expectedBytes, spanBytes: end - begin },
    );
  }
  return { dtype, shape: [...(shape as number[])], dataOffsets: [begin, end] };
}

/**
 * Checks that the spans of `tensors` tile the data section of `dataBytes` bytes from 0: no gap,
 * overlap, truncation or trailing byte.
 * @throws FMT_SAFETENSORS_INVALID gap, overlap, truncated, trailing-bytes
 */
export function checkSafetensorsLayout(
  tensors: ReadonlyMap<string, SafetensorsEntry>,
  dataBytes: number,
): void {
  const spans = [...tensors].sort(
    ([, a], [, b]) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1],
  );
  let cursor = 0;
  for (const [name, { dataOffsets }] of spans) {
    const [begin, end] = dataOffsets;
    if (begin > cursor) {
      throw safetensorsInvalid('gap', `unused bytes before tensor ${name}`, {
        tensor: name,
        begin,
        expected: cursor,
      });
    }
    if (begin < cursor) {
      throw safetensorsInvalid('overlap', `tensor ${name} overlaps the tensor before it`, {
        tensor: name,
        begin,
        expected: cursor,
      });
    }
    cursor = end;
  }
  if (cursor > dataBytes) {
    throw safetensorsInvalid(
      'truncated',
      `the tensors need ${cursor} data bytes, the file has ${dataBytes}`,
      {
        neededBytes: cursor,
        dataBytes,
      },
    );
  }
  if (cursor < dataBytes) {
    throw safetensorsInvalid(
      'trailing-bytes',
      `${dataBytes - cursor} bytes after the last tensor`,
      {
        usedBytes: cursor,
        dataBytes,
      },
    );
  }
}

/**
 * Parses and validates the N header bytes of a file of `fileBytes` bytes: UTF-8, a JSON object
 * (starting at its first byte) with no duplicate key at any depth, `__metadata__` strings only,
 * each entry exactly `{dtype, shape, data_offsets}` with a supported dtype and a byte span equal
 * to dtype × shape, and spans that tile the data section from 0 to the end of the file with no
 * gap, overlap or trailing byte. Reads no tensor data, so it works on a header read from a file
 * handle as well as on a buffer.
 * @throws FMT_SAFETENSORS_INVALID with `details.reason`
 */
export function parseSafetensorsHeader(
  headerBytes: Uint8Array,
  fileBytes: number,
): SafetensorsHeader {
  const { tensors, metadata } = parseSafetensorsEntries(headerBytes);
  const dataStart = 8 + headerBytes.length;
  checkSafetensorsLayout(tensors, fileBytes - dataStart);
  return { tensors, metadata, dataStart, fileBytes };
}

/**
 * The entries and metadata of N header bytes, every rule of `parseSafetensorsHeader` checked
 * except the layout against the file's size (for a reader that does not know the size yet, such
 * as one hashing a stream as it arrives).
 * @throws FMT_SAFETENSORS_INVALID with `details.reason`
 */
export function parseSafetensorsEntries(headerBytes: Uint8Array): {
  readonly tensors: ReadonlyMap<string, SafetensorsEntry>;
  readonly metadata: Readonly<Record<string, string>>;
} {
  const header = parseJson(headerBytes);
  const metadata = parseMetadata(header[METADATA_KEY]);
  const names = Object.keys(header)
    .filter((name) => name !== METADATA_KEY)
    .sort(compareCodePoints);
  const tensors = new Map<string, SafetensorsEntry>();
  for (const name of names) tensors.set(name, parseEntry(name, header[name]));
  return { tensors, metadata };
}
