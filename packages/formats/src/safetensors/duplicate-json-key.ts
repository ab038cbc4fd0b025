/**
 * The first object key that appears twice in the same JSON object, at any depth, or undefined.
 *
 * `JSON.parse` keeps the last of two equal keys without a word, so a header naming a tensor twice
 * would silently lose one entry (and a reader in another language might keep the first). Keys are
 * compared after unescaping (`"a"` and `"\u0061"` are the same key). `text` must already be valid
 * JSON (the caller parsed it): this scan only tracks strings and nesting.
 */
export function duplicateJsonKey(text: string): string | undefined {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const keys = open[open.length - 1];
      if (expectKey && keys instanceof Set) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      expectKey = false;
      i = j;
    } else if (c === 0x7b /* { */) {
      open.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(null);
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] instanceof Set;
    }
  }
  return undefined;
}
