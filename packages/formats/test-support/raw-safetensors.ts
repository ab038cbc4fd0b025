/**
 * Assembles safetensors bytes from a header *as given* (an object is written with
 * `JSON.stringify`, a string verbatim) and a data section, with no validation at all, so tests
 * and the test-vector generator can build the malformed files a reader must refuse. Not exported
 * from the package: files meant to be read are written by `writeSafetensors`.
 */
export function rawSafetensors(
  header: string | Readonly<Record<string, unknown>>,
  data: Uint8Array = new Uint8Array(0),
  options: { readonly headerLength?: bigint; readonly headerBytes?: Uint8Array } = {},
): Uint8Array {
  const json =
    options.headerBytes ??
    new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, options.headerLength ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}
