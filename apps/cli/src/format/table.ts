/** A cell: text, or a number shown as given. */
export type Cell = string | number;

/** How to lay out a table. */
export interface TableOptions {
  /** Per column; numbers default to right, text to left. */
  readonly align?: readonly ('left' | 'right')[];
  /** Indent every line by this many spaces (default 2). */
  readonly indent?: number;
}

/**
 * Renders rows as a plain-text table with a header and a rule, one string per line (no colours,
 * so the output reads the same in a terminal, a log file and a test).
 */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
  options: TableOptions = {},
): string[] {
  const text = rows.map((row) => headers.map((_, i) => String(row[i] ?? '')));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...text.map((row) => (row[i] ?? '').length)),
  );
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((row) => isNumeric(row[i])));
  const alignOf = (i: number): 'left' | 'right' =>
    options.align?.[i] ?? (numeric[i] === true ? 'right' : 'left');
  const pad = ' '.repeat(options.indent ?? 2);
  const format = (cells: readonly string[]): string =>
    pad +
    cells
      .map((cell, i) => {
        const width = widths[i] ?? 0;
        return alignOf(i) === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [
    format(headers),
    pad + widths.map((width) => '-'.repeat(width)).join('  '),
    ...text.map(format),
  ];
}

function isNumeric(cell: Cell | undefined): boolean {
  return (
    typeof cell === 'number' ||
    (typeof cell === 'string' && /^[-+]?[\d.,]+(e[-+]?\d+)?( ?[a-z%]+)?$/i.test(cell))
  );
}
