/** pino's numeric levels. */
const LEVEL_NAMES: Readonly<Record<number, LogLevel>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** A log level, as pino names it. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Every level, least to most severe. */
export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** One child-process output line, parsed. */
export interface LogRecord {
  /** The level of a pino record; undefined for a plain (non-JSON) line. */
  readonly level: LogLevel | undefined;
  /** The short human form: `info  worker started lanes=[] weights={"dit":0}`. */
  readonly text: string;
  /** The pino record's fields (empty for a plain line). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** True for routine HTTP access lines (shown only with --verbose). */
  readonly routine: boolean;
}

/** Fields already shown by the prefix or too bulky for one line. */
const HIDDEN_FIELDS = new Set([
  'level',
  'time',
  'msg',
  'service',
  'pid',
  'hostname',
  'workerId',
  'platform',
  'requirements',
  'req',
  'res',
  'reqId',
  'responseTime',
  'err',
]);

const MAX_VALUE_CHARS = 80;

function valueText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

function errorText(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { message, code } = err as { message?: unknown; code?: unknown };
  if (typeof message !== 'string') return undefined;
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

/**
 * Turns one line of a child's output into a short human line: pino JSON becomes
 * `<level> <msg> key=value …` (bulky fields dropped, `err` as its message); anything else is kept
 * as a plain line. Fastify's per-request lines are marked routine unless the status is ≥ 400.
 */
export function parseLogLine(raw: string): LogRecord {
  const trimmed = raw.trimEnd();
  if (!trimmed.startsWith('{')) {
    return { level: undefined, text: trimmed, fields: {}, routine: isNativeNoise(trimmed) };
  }
  let fields: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
    fields = parsed as Record<string, unknown>;
  } catch {
    return { level: undefined, text: trimmed, fields: {}, routine: false };
  }
  const level = typeof fields['level'] === 'number' ? LEVEL_NAMES[fields['level']] : undefined;
  const msg = typeof fields['msg'] === 'string' ? fields['msg'] : '';
  const parts = [(level ?? 'log').padEnd(5), msg];
  const res = fields['res'] as { statusCode?: unknown } | undefined;
  const status = typeof res?.statusCode === 'number' ? res.statusCode : undefined;
  const routine =
    msg === 'incoming request' || (msg === 'request completed' && (status ?? 0) < 400);
  if (msg === 'request completed' && status !== undefined) parts.push(`status=${status}`);
  for (const [key, value] of Object.entries(fields)) {
    if (HIDDEN_FIELDS.has(key) || value === undefined) continue;
    parts.push(
      `${key}=${valueText(key === 'jobId' && typeof value === 'string' ? value.slice(0, 8) : value)}`,
    );
  }
  const err = errorText(fields['err']);
  if (err !== undefined) parts.push(`err="${valueText(err)}"`);
  return { level, text: parts.filter((part) => part !== '').join(' '), fields, routine };
}

/**
 * Native libraries' start-up chatter that says nothing about flowfleet: ONNX Runtime's WebGPU
 * provider (Dawn) probing for Vulkan on a machine without it, and that warning's location line.
 * Shown only with --verbose.
 */
const NATIVE_NOISE = [/^Warning: Couldn't load Vulkan/, /^\s+at operator\(\) \(.*dawn/];

function isNativeNoise(line: string): boolean {
  return line === '' || NATIVE_NOISE.some((pattern) => pattern.test(line));
}

/** True when a record at `level` is shown under the threshold `min` (plain lines always are). */
export function isShown(record: LogRecord, min: LogLevel): boolean {
  if (record.level === undefined) return true;
  return LOG_LEVELS.indexOf(record.level) >= LOG_LEVELS.indexOf(min);
}
