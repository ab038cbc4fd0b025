import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { z } from 'zod';
import type { Role } from './auth.js';

/** What the OpenAPI document says about one route (kept in the fastify route `config`). */
export interface RouteDoc {
  /** Roles any one of which may call the route; empty for public routes. */
  readonly roles: readonly Role[];
  readonly summary: string;
  /** Path parameters schema. */
  readonly params?: z.ZodType;
  /** Request headers the route reads besides auth and content type. */
  readonly headers?: readonly RouteHeader[];
  /** JSON body schema, or `binary` for a raw `application/octet-stream` upload. */
  readonly body?: z.ZodType | 'binary';
  /** Success status and its body (`binary` raw bytes, `text` plain text, `html` a page). */
  readonly response: {
    readonly status: number;
    readonly body: z.ZodType | 'binary' | 'text' | 'html';
  };
  /** Error codes the route may answer with besides the auth and generic ones. */
  readonly errors?: readonly string[];
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

/** A request header a route reads. */
export interface RouteHeader {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  readonly schema: z.ZodType;
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
}

const SAFE_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];

/**
 * Collects every route the app registers (fastify `onRoute`), so auth tests and the OpenAPI
 * document enumerate the server's real table instead of a hand-written list.
 * @throws Error (a defect) when a route is registered without its `config.flowfleet` doc.
 */
export function collectRoutes(app: FastifyInstance): readonly RouteInfo[] {
  const routes: RouteInfo[] = [];
  app.addHook('onRoute', (options) => {
    const doc = options.config?.flowfleet;
    if (doc === undefined) {
      throw new Error(`route ${String(options.method)} ${options.url} has no config.flowfleet doc`);
    }
    if (doc.listed === false) return;
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) {
      routes.push({
        method,
        url: options.url,
        roles: doc.roles,
        mutating: !SAFE_METHODS.includes(method),
        doc,
      });
    }
  });
  return routes;
}
