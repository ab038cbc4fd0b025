export { ERROR_CODES, RETIRED_ERROR_CODES } from './codes.js';
export type { ErrorCode, ErrorCodeInfo } from './codes.js';
export { FlowfleetError, isFlowfleetError } from './flowfleet-error.js';
export type { ErrorEnvelope, FlowfleetErrorOptions } from './flowfleet-error.js';
export { renderErrorsDoc } from './errors-doc.js';
