/** One tracked task (a rollout). */
export interface ProgressState {
  /** Steps done. */
  readonly step: number;
  readonly steps: number;
  /** `queued`, `active`, `completed`, `failed`. */
  readonly state: string;
  /** Shown after the bar, e.g. the worker. */
  readonly note?: string;
}

interface Row extends ProgressState {
  readonly label: string;
}

const BAR_WIDTH = 20;
const CLEAR_LINE = '\r\x1b[2K';

/** `[██████░░░░] 3/6` */
export function progressBar(step: number, steps: number, width = BAR_WIDTH): string {
  const filled = steps <= 0 ? 0 : Math.round((Math.min(step, steps) / steps) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${step}/${steps}`;
}

/**
 * Progress of several tasks. On a terminal it keeps one bar per task and redraws them in place
 * (other output goes above them through `log`); elsewhere it prints a plain line whenever a
 * task's state changes, so logs and pipes stay readable.
 */
export class ProgressBoard {
  readonly #write: (text: string) => void;
  readonly #tty: boolean;
  readonly #columns: number;
  readonly #rows = new Map<string, Row>();
  #drawn = 0;

  constructor(write: (text: string) => void, tty: boolean, columns = 80) {
    this.#write = write;
    this.#tty = tty;
    this.#columns = Math.max(40, columns);
  }

  /** Starts tracking `key`. */
  add(key: string, label: string, state: ProgressState): void {
    this.#rows.set(key, { label, ...state });
    if (this.#tty) this.#redraw();
    else this.#plain(key);
  }

  /** Updates `key`; redraws (terminal) or prints a line when its state or note changed. */
  update(key: string, state: ProgressState): void {
    const before = this.#rows.get(key);
    if (before === undefined) return;
    this.#rows.set(key, { label: before.label, ...state });
    if (this.#tty) this.#redraw();
    else if (before.state !== state.state || before.note !== state.note) this.#plain(key);
  }

  /** Writes a line above the bars (terminal) or as is. */
  log(text: string): void {
    if (!this.#tty) {
      this.#write(`${text}\n`);
      return;
    }
    this.#clear();
    this.#write(`${text}\n`);
    this.#redraw(false);
  }

  /** Leaves the final bars in place; later output goes below them. */
  finish(): void {
    this.#drawn = 0;
  }

  #line(row: Row): string {
    const note = row.note === undefined ? '' : `  ${row.note}`;
    const text = `  ${row.label}  ${progressBar(row.step, row.steps)}  ${row.state}${note}`;
    return text.length > this.#columns - 1 ? text.slice(0, this.#columns - 1) : text;
  }

  #plain(key: string): void {
    const row = this.#rows.get(key);
    if (row === undefined) return;
    const note = row.note === undefined ? '' : ` (${row.note})`;
    this.#write(`  ${row.label}: ${row.state} ${row.step}/${row.steps}${note}\n`);
  }

  #clear(): void {
    if (this.#drawn === 0) return;
    this.#write(`\x1b[${this.#drawn}A`);
    for (let i = 0; i < this.#drawn; i++) this.#write(`${CLEAR_LINE}\n`);
    this.#write(`\x1b[${this.#drawn}A`);
    this.#drawn = 0;
  }

  #redraw(moveUp = true): void {
    if (moveUp && this.#drawn > 0) this.#write(`\x1b[${this.#drawn}A`);
    for (const row of this.#rows.values()) this.#write(`${CLEAR_LINE}${this.#line(row)}\n`);
    this.#drawn = this.#rows.size;
  }
}
