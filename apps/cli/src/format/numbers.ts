/** A duration for people: `850 ms`, `2.4 s`, `3 min 05 s`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** A number with a fixed count of decimals and an explicit sign for non-negatives (`+0.512`). */
export function signed(value: number, decimals = 3): string {
  const text = value.toFixed(decimals);
  return value >= 0 && !text.startsWith('-') ? `+${text}` : text;
}

/**
 * The first 8 characters of an id's unique part: a rollout id is `<lane>.<uuid>`, so the part
 * after the last dot (8 hex digits of a UUID are unique enough for a table).
 */
export function shortId(id: string): string {
  const unique = id.slice(id.lastIndexOf('.') + 1);
  return unique.length > 8 ? unique.slice(0, 8) : unique;
}

/** Bytes for people: `512 B`, `3.1 KiB`, `12.0 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
