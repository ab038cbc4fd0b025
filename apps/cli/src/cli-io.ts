/**
 * What a command needs from its host: output streams, whether stdout is a terminal, the
 * environment and a cancellation signal (Ctrl-C). A narrow context so tests pass a plain object.
 */
export interface CliIo {
  /** Writes text to standard output as is (add the newline yourself). */
  readonly out: (text: string) => void;
  /** Writes text to standard error as is. */
  readonly err: (text: string) => void;
  /** True when stdout is a terminal: progress bars and live redraws only then. */
  readonly isTTY: boolean;
  /** Terminal width in columns (80 when unknown). */
  readonly columns: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on the first SIGINT/SIGTERM; long commands stop and clean up. */
  readonly signal: AbortSignal;
  /** Aborted on a second SIGINT/SIGTERM: stop waiting for children, kill them. */
  readonly forceSignal: AbortSignal;
}

/** Writes one line (a newline is appended). */
export function line(write: (text: string) => void, text = ''): void {
  write(`${text}\n`);
}

/** The CliIo of this process: its stdout/stderr and env, with the signals main.ts controls. */
export function processIo(signal: AbortSignal, forceSignal: AbortSignal): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    isTTY: process.stdout.isTTY === true,
    columns: process.stdout.columns || 80,
    env: process.env,
    signal,
    forceSignal,
  };
}
