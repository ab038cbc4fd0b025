function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

/**
 * Orders strings by Unicode code point, as Python's `sorted` and Rust's `str` ordering do. Plain
 * `<` compares UTF-16 units, which puts U+10000 and above before U+E000–U+FFFF; a format that
 * another language must reproduce byte for byte cannot depend on that.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate starts a code point above every BMP unit that is not itself a surrogate.
    if (isSurrogate(x) !== isSurrogate(y)) return isSurrogate(x) ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
