import type { RouteDoc } from '../route-table.js';

/**
 * The cookie that carries the token to the bull-board UI under `/queues` (set when `/` or
 * `/queues` is opened with a valid `?token=`): HttpOnly, SameSite=Strict, scoped to `/queues`,
 * and a session cookie (gone when the browser closes).
 */
export const QUEUES_COOKIE = 'flowfleet_queues';
/** Where the bull-board UI is mounted. */
export const QUEUES_PATH = '/queues';

/** What `authorizationOf` reads from a request. */
export interface BrowserRequest {
  readonly headers: {
    readonly authorization?: string | undefined;
    readonly cookie?: string | undefined;
  };
  readonly query: unknown;
}

/** The `?token=` value, when exactly one non-empty value was given. */
export function queryToken(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const value = (query as Record<string, unknown>)['token'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The token in the `/queues` session cookie, if the Cookie header carries one. */
export function cookieToken(cookieHeader: string | undefined): string | undefined {
  for (const pair of (cookieHeader ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== QUEUES_COOKIE) continue;
    try {
      const value = decodeURIComponent(pair.slice(at + 1).trim());
      return value === '' ? undefined : value;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The `Authorization` value to check for a route. API routes: the header only. Browser-facing
 * routes (`doc.browserToken`): an explicit `?token=` first (what the user just presented, so it
 * is the one validated before a cookie is set from it), then the header, then — where the route
 * allows it — the `/queues` session cookie.
 */
export function authorizationOf(
  request: BrowserRequest,
  doc: Pick<RouteDoc, 'browserToken'>,
): string | undefined {
  const header = request.headers.authorization;
  if (doc.browserToken === undefined) return header;
  const fromQuery = queryToken(request.query);
  if (fromQuery !== undefined) return `Bearer ${fromQuery}`;
  if (header !== undefined) return header;
  if (doc.browserToken !== 'query-or-cookie') return undefined;
  const fromCookie = cookieToken(request.headers.cookie);
  return fromCookie === undefined ? undefined : `Bearer ${fromCookie}`;
}

/** The Set-Cookie value that hands `token` to the `/queues` UI. */
export function queuesCookie(token: string, secure: boolean): string {
  return [
    `${QUEUES_COOKIE}=${encodeURIComponent(token)}`,
    `Path=${QUEUES_PATH}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** `url` (path and query) without its `token` parameter, e.g. for a redirect. */
export function withoutToken(url: string): string {
  const parsed = new URL(url, 'http://placeholder');
  parsed.searchParams.delete('token');
  return `${parsed.pathname}${parsed.search}`;
}
