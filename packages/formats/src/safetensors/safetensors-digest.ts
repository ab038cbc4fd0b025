import { createHash, type Hash } from 'node:crypto';
import type { FlowfleetError } from '@flowfleet/errors';
import {
  checkSafetensorsLayout,
  parseSafetensorsEntries,
  parseSafetensorsHeader,
  readHeaderLength,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from './safetensors-header.js';

/** A safetensors file's validated header and the sha256 of every tensor's bytes. */
export interface SafetensorsDigest {
  readonly header: SafetensorsHeader;
  /** sha256 (lowercase hex) of each tensor's data bytes, by tensor name (header order). */
  readonly tensorSha256: ReadonlyMap<string, string>;
}

interface Span {
  readonly name: string;
  readonly begin: number;
  readonly end: number;
}

function spansInFileOrder(tensors: ReadonlyMap<string, SafetensorsEntry>): Span[] {
  return [...tensors]
    .map(([name, entry]) => ({ name, begin: entry.dataOffsets[0], end: entry.dataOffsets[1] }))
    .sort((a, b) => a.begin - b.begin || a.end - b.end);
}

/**
 * Hashes each tensor of a safetensors file as its bytes stream past, without holding the file:
 * only the 8 + N header bytes are buffered. The header's rules are checked as soon as it is
 * complete (its spans must tile the data section, so each tensor is hashed in one pass), and the
 * layout against the file's real size when `finish` is called — a truncated file or trailing
 * bytes fail there, exactly as `parseSafetensorsHeader` would on the whole file. BOOL values are
 * not checked (that needs the values; `readSafetensors` does it).
 */
export class SafetensorsDigester {
  readonly #first8 = new Uint8Array(8);
  #received = 0;
  #headerBytes: Uint8Array | undefined;
  #headerFilled = 0;
  #spans: Span[] | undefined;
  #next = 0;
  #dataPos = 0;
  #hash: Hash | undefined;
  readonly #digests = new Map<string, string>();
  #failure: FlowfleetError | undefined;

  /**
   * Feeds the next bytes of the file.
   * @throws FMT_SAFETENSORS_INVALID as soon as the header breaks a rule (then on every call)
   */
  update(chunk: Uint8Array): void {
    if (this.#failure !== undefined) throw this.#failure;
    try {
      this.#update(chunk);
    } catch (error) {
      this.#failure = error as FlowfleetError;
      throw error;
    }
  }

  /**
   * The digest, once every byte was fed.
   * @throws FMT_SAFETENSORS_INVALID when the file broke a rule (too short, truncated, trailing
   *   bytes, or anything `update` refused)
   */
  finish(): SafetensorsDigest {
    if (this.#failure !== undefined) throw this.#failure;
    const fileBytes = this.#received;
    if (this.#headerBytes === undefined) {
      // Fewer than 8 bytes, or a header length the file cannot hold: the whole-file check says which.
      readHeaderLength(this.#first8.subarray(0, Math.min(8, fileBytes)), fileBytes);
    }
    const headerBytes = this.#headerBytes ?? new Uint8Array(0);
    if (this.#headerFilled < headerBytes.length) {
      readHeaderLength(this.#first8, fileBytes);
    }
    const header = parseSafetensorsHeader(headerBytes, fileBytes);
    return { header, tensorSha256: new Map(this.#digests) };
  }

  #update(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.#received < 8) {
      const take = Math.min(8 - this.#received, bytes.length);
      this.#first8.set(bytes.subarray(0, take), this.#received);
      this.#received += take;
      bytes = bytes.subarray(take);
      if (this.#received < 8) return;
      // The real size is not known yet: the bound against it is checked in `finish`.
      this.#headerBytes = new Uint8Array(readHeaderLength(this.#first8, Number.MAX_SAFE_INTEGER));
    }
    const header = this.#headerBytes;
    if (header === undefined) return;
    if (this.#headerFilled < header.length) {
      const take = Math.min(header.length - this.#headerFilled, bytes.length);
      header.set(bytes.subarray(0, take), this.#headerFilled);
      this.#headerFilled += take;
      this.#received += take;
      bytes = bytes.subarray(take);
      if (this.#headerFilled < header.length) return;
      const { tensors } = parseSafetensorsEntries(header);
      const spans = spansInFileOrder(tensors);
      // Gaps and overlaps now (the spans' own end is the data size); size in `finish`.
      checkSafetensorsLayout(
        tensors,
        spans.reduce((end, span) => Math.max(end, span.end), 0),
      );
      this.#spans = spans;
      this.#closeFinished();
    }
    this.#received += bytes.length;
    this.#feedData(bytes);
  }

  #feedData(bytes: Uint8Array): void {
    const spans = this.#spans ?? [];
    let offset = 0;
    while (offset < bytes.length) {
      const span = spans[this.#next];
      if (span === undefined) {
        // Past the last tensor: trailing bytes, which `finish` refuses.
        this.#dataPos += bytes.length - offset;
        return;
      }
      const take = Math.min(bytes.length - offset, span.end - this.#dataPos);
      this.#hash ??= createHash('sha256');
      this.#hash.update(bytes.subarray(offset, offset + take));
      offset += take;
      this.#dataPos += take;
      this.#closeFinished();
    }
  }

  /** Closes every span that ends at or before the data read so far (empty tensors included). */
  #closeFinished(): void {
    const spans = this.#spans ?? [];
    for (let span = spans[this.#next]; span !== undefined; span = spans[this.#next]) {
      if (span.end > this.#dataPos) return;
      this.#digests.set(span.name, (this.#hash ?? createHash('sha256')).digest('hex'));
      this.#hash = undefined;
      this.#next += 1;
    }
  }
}

/**
 * The digest of a whole safetensors byte source (a file stream, chunks in memory).
 * @throws FMT_SAFETENSORS_INVALID as `SafetensorsDigester`
 */
export async function digestSafetensors(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<SafetensorsDigest> {
  const digester = new SafetensorsDigester();
  for await (const chunk of source) digester.update(chunk);
  return digester.finish();
}
