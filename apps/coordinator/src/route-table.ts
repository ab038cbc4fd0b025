import type { ErrorCode } from '@flowfleet/errors';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { z } from 'zod';
import type { Role } from '@flowfleet/protocol/http-edge';

/**
 * What a route's fastify `schema` may hold: zod schemas only (the validator and serializer
 * compilers refuse anything else), one per request part and one per JSON answer status.
 */
export interface RouteSchema {
  readonly params?: z.ZodType;
  readonly querystring?: z.ZodType;
  /** Request headers the route reads besides auth and content type (a loose object). */
  readonly headers?: z.ZodType;
  readonly body?: z.ZodType;
  /** JSON answers by status. */
  readonly response?: Readonly<Record<number, z.ZodType>>;
}

/**
 * What the route table and the OpenAPI document need besides the route's zod `schema` (kept in the
 * fastify route `config`): who may call it and what it is for.
 */
export interface RouteDoc {
  /** Roles any one of which may call the route; empty for public routes. */
  readonly roles: readonly Role[];
  readonly summary: string;
  /** The body is raw bytes (`application/octet-stream`, the only type the route takes), not JSON. */
  readonly consumes?: 'binary';
  /**
   * A success answer that is not JSON: raw bytes, plain text or an HTML page (JSON answers are
   * described by `schema.response`).
   */
  readonly produces?: { readonly status: number; readonly body: 'binary' | 'text' | 'html' };
  /** The code of a body that fails `schema.body` (default `API_INVALID_BODY`). */
  readonly bodyError?: ErrorCode;
  /**
   * The route needs Redis: while the connection is not ready it answers 503
   * `API_REDIS_UNAVAILABLE` at once (rather than after ioredis's retries), and so does a Redis
   * failure mid-request.
   */
  readonly usesRedis?: true;
  /** Error codes the route may answer with besides the auth, validation and generic ones. */
  readonly errors?: readonly ErrorCode[];
  /**
   * Where a browser-facing route also takes the token besides `Authorization: Bearer` (a browser
   * cannot send that header on navigation): `query` (`?token=`), or `query-or-cookie` (plus the
   * session cookie the route set). API routes leave this unset: header only.
   */
  readonly browserToken?: 'query' | 'query-or-cookie';
  /**
   * `false` for the routes of a mounted UI (bull-board under `/queues`): guarded by `roles` like
   * any route, but not part of the API, so left out of the route table and the OpenAPI document.
   */
  readonly listed?: false;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    flowfleet?: RouteDoc;
  }
}

/** One registered route, as the server itself knows it. */
export interface RouteInfo {
  readonly method: HTTPMethods;
  /** The fastify URL pattern, e.g. `/v1/rollouts/:id`. */
  readonly url: string;
  /** Roles that may call it; empty for public routes. */
  readonly roles: readonly Role[];
  /** True for every method but GET/HEAD/OPTIONS. */
  readonly mutating: boolean;
  readonly doc: RouteDoc;
  /** The route's zod schemas, exactly as fastify validates and serializes with them. */
  readonly schema: RouteSchema;
}

const SAFE_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];

/**
 * Collects every route the app registers (fastify `onRoute`), so auth tests and the OpenAPI
 * document enumerate the server's real table instead of a hand-written list.
 * @throws Error (a defect) when a route is registered without its `config.flowfleet` doc, or
 *   without a success answer (`schema.response` or `doc.produces`).
 */
export function collectRoutes(app: FastifyInstance): readonly RouteInfo[] {
  const routes: RouteInfo[] = [];
  app.addHook('onRoute', (options) => {
    const doc = options.config?.flowfleet;
    if (doc === undefined) {
      throw new Error(`route ${String(options.method)} ${options.url} has no config.flowfleet doc`);
    }
    // A GET's HEAD twin (exposeHeadRoutes) shares its config and auth: the GET documents both.
    if (doc.listed === false || options.method === 'HEAD') return;
    const schema = (options.schema ?? {}) as RouteSchema;
    if (doc.produces === undefined && Object.keys(schema.response ?? {}).length === 0) {
      throw new Error(`route ${String(options.method)} ${options.url} documents no success answer`);
    }
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) {
      routes.push({
        method,
        url: options.url,
        roles: doc.roles,
        mutating: !SAFE_METHODS.includes(method),
        doc,
        schema,
      });
    }
  });
  return routes;
}
