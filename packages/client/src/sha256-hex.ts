/**
 * The lowercase hex sha256 of `bytes`, through WebCrypto (global in Node 20 and browsers, so the
 * client needs no Node-only module for it).
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
