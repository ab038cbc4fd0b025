/** The number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the checksum Redis Cluster hashes keys
// with (cluster spec, "Keys distribution model"); the table is computed once at load.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = crc & 0xffff;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!) & 0xffff;
  return crc;
}

/**
 * The part of `key` Redis Cluster hashes: the text between the first `{` and the next `}` when
 * that is non-empty (a hash tag), else the whole key.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return key;
  return key.slice(open + 1, close);
}

/** The hash slot (0..16383) Redis Cluster stores `key` in: what `CLUSTER KEYSLOT` answers. */
export function keySlot(key: string): number {
  return crc16(Buffer.from(hashTagOf(key), 'utf8')) % CLUSTER_SLOTS;
}

/**
 * `keys` grouped by hash slot, in first-seen order: each group may be one multi-key command
 * (`XREAD … STREAMS`) on a cluster, where keys of different slots are refused (CROSSSLOT).
 */
export function groupBySlot(keys: readonly string[]): string[][] {
  const groups = new Map<number, string[]>();
  for (const key of keys) {
    const slot = keySlot(key);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [key]);
    else group.push(key);
  }
  return [...groups.values()];
}
