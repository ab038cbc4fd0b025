import { FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import type { z } from 'zod';

/** One problem with a value: where (a path of keys and indices) and what. */
export interface ValidationIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

/** The details of an error raised by {@link parseOrThrow}. */
export interface ValidationDetails {
  readonly issues: ValidationIssue[];
}

const MAX_ISSUES = 50;

/** `a.b[2].c` for a path, `(root)` for the empty one. */
export function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

/**
 * Parses `value` with `schema` and returns the output, or throws a coded error whose
 * `details.issues` lists each problem (at most 50) with its path.
 * @throws FlowfleetError `code` when the value does not match
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: ErrorCode,
  what = 'value',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(result.error, code, what);
}

/**
 * The coded error for a failed zod parse: `details.issues` lists each problem (at most 50) with
 * its path (what {@link parseOrThrow} throws, for callers that ran the parse themselves).
 */
export function validationError(
  error: z.ZodError,
  code: ErrorCode,
  what = 'value',
): FlowfleetError<ErrorCode, ValidationDetails> {
  const issues: ValidationIssue[] = error.issues.slice(0, MAX_ISSUES).map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'number' ? part : String(part))),
    message: issue.message,
  }));
  const first = issues[0];
  const more = error.issues.length - 1;
  const summary = first === undefined ? 'invalid' : `${formatPath(first.path)}: ${first.message}`;
  return new FlowfleetError<ErrorCode, ValidationDetails>(
    code,
    `invalid ${what}: ${summary}${more > 0 ? ` (and ${more} more)` : ''}`,
    { details: { issues }, cause: error },
  );
}
