// `@flowfleet/protocol/http-edge`: the HTTP edge code the coordinator and every worker's peer
// server share (ADR 012) — the bearer auth check, the blob route, the error envelope of a small
// server. Fastify is a type here: the apps own their servers; protocol opens no socket.
export { BearerAuth } from './bearer-auth.js';
export type { BearerTokens, Role } from './bearer-auth.js';
export { BLOB_ROUTE, parseRange, registerBlobRangeRoute } from './blob-range-route.js';
export type { BlobRangeRouteOptions, ByteRange, OpenedBytes } from './blob-range-route.js';
export {
  MAX_PATH_PARAM_LENGTH,
  edgeServerOptions,
  refuseMissingHost,
} from './edge-server-options.js';
export type { EdgeServerOptions } from './edge-server-options.js';
export { installErrorEnvelope } from './error-envelope-handler.js';
