import { ERROR_CODES, RETIRED_ERROR_CODES, type ErrorCodeInfo } from './codes.js';

const HEADER = [
  '# Error codes',
  '',
  'Every expected failure in flowfleet is a `FlowfleetError` with one of these codes. Over HTTP it is',
  'the envelope `{code, message, details}` with the status below. A code is never reused once retired.',
  '',
  'This table is generated from `packages/errors/src/codes.ts` by `npm run docs:errors`; a test fails',
  'when the two differ.',
  '',
  '| code | raised by | HTTP | when |',
  '| --- | --- | --- | --- |',
];

/** The markdown of docs/errors.md, rendered from the code table. */
export function renderErrorsDoc(
  codes: Readonly<Record<string, ErrorCodeInfo>> = ERROR_CODES,
  retired: readonly string[] = RETIRED_ERROR_CODES,
): string {
  const rows = Object.entries(codes).map(
    ([code, info]) =>
      `| \`${code}\` | ${info.source} | ${info.httpStatus} | ${info.summary.replaceAll('|', '\\|')} |`,
  );
  const gone = [
    '',
    '## Retired codes',
    '',
    'No longer raised, and never to be reused: ' +
      [...retired]
        .sort()
        .map((code) => `\`${code}\``)
        .join(', ') +
      '.',
  ];
  return [...HEADER, ...rows, ...(retired.length > 0 ? gone : []), ''].join('\n');
}
