import { isShown, type LogLevel, type LogRecord } from './log-line.js';

/** What to show of the children's output. */
export interface ChildLogSinkOptions {
  /** Lowest level shown (plain lines are always shown). */
  readonly level: LogLevel;
  /** Show routine lines too (HTTP access lines, redis-server's own log). */
  readonly verbose: boolean;
  /** Where shown lines go (a newline is appended). */
  readonly write: (line: string) => void;
}

const PREFIX_WIDTH = '[coord]'.length;

/** `[w1]   ` — the service name in brackets, padded so the messages line up. */
export function servicePrefix(service: string): string {
  return `[${service}]`.padEnd(PREFIX_WIDTH);
}

/** A LocalFleet `onLog` that prints the children's lines, prefixed and filtered. */
export function childLogSink(
  options: ChildLogSinkOptions,
): (service: string, record: LogRecord) => void {
  return (service, record) => {
    if (record.routine && !options.verbose) return;
    if (!isShown(record, options.level)) return;
    if (record.text === '') return;
    options.write(`${servicePrefix(service)} ${record.text}`);
  };
}
