import { FlowfleetError } from '@flowfleet/errors';

/** Where a Sentinel-monitored master is found, as `REDIS_URL` names it in `sentinel` mode. */
export interface SentinelTarget {
  /** Every sentinel to ask (ioredis tries them in turn). */
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master group's name (`sentinel monitor <name> …`). */
  readonly name: string;
  /** The credentials of the master and replicas (the URL's user info). */
  readonly username?: string;
  readonly password?: string;
  /** The sentinels' own credentials (`?sentinelUsername=…&sentinelPassword=…`), when they differ. */
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
  /** `rediss:`: TLS to the sentinels and to the master. */
  readonly tls: boolean;
}

/** The port a sentinel listens on when the URL gives none. */
export const DEFAULT_SENTINEL_PORT = 26379;

const QUERY_KEYS = new Set(['sentinelUsername', 'sentinelPassword']);

/**
 * `url` read as `redis[s]://[user:password@]host[:port][,host[:port]…]/<master-name>
 * [?sentinelUsername=…&sentinelPassword=…]` (ports default to 26379; parts percent-encoded).
 * @throws FlowfleetError REDIS_URL_INVALID naming what is wrong (the password never shown)
 */
export function parseSentinelUrl(url: string): SentinelTarget {
  const scheme = /^(rediss?):\/\//.exec(url);
  if (scheme === null) throw invalidSentinelUrl(url, 'the scheme is not redis:// or rediss://');
  const rest = url.slice(scheme[0].length);
  const pathAt = rest.indexOf('/');
  if (pathAt < 0) throw invalidSentinelUrl(url, 'no master name (the path after the hosts)');
  const authority = rest.slice(0, pathAt);
  const [path = '', query = ''] = rest.slice(pathAt + 1).split('?', 2);
  const at = authority.lastIndexOf('@');
  const userInfo = at < 0 ? '' : authority.slice(0, at);
  const hostList = at < 0 ? authority : authority.slice(at + 1);
  const sentinels = hostList.split(',').map((entry) => {
    // Each entry parsed as a URL authority of its own (IPv6 in brackets, port range checked).
    let parsed: URL;
    try {
      parsed = new URL(`redis://${entry}`);
    } catch {
      throw invalidSentinelUrl(url, `sentinel address "${entry}" is not host[:port]`);
    }
    if (parsed.hostname === '' || parsed.pathname !== '' || parsed.username !== '') {
      throw invalidSentinelUrl(url, `sentinel address "${entry}" is not host[:port]`);
    }
    return {
      host: parsed.hostname.replace(/^\[|\]$/g, ''),
      port: parsed.port === '' ? DEFAULT_SENTINEL_PORT : Number(parsed.port),
    };
  });
  const name = decodeURIComponent(path);
  if (name === '' || name.includes('/')) {
    throw invalidSentinelUrl(url, 'the path must be the master group name, e.g. /mymaster');
  }
  const params = new URLSearchParams(query);
  for (const key of params.keys()) {
    if (!QUERY_KEYS.has(key)) throw invalidSentinelUrl(url, `unknown parameter ${key}`);
  }
  const colon = userInfo.indexOf(':');
  const username = decodeURIComponent(colon < 0 ? userInfo : userInfo.slice(0, colon));
  const password = colon < 0 ? '' : decodeURIComponent(userInfo.slice(colon + 1));
  const sentinelUsername = params.get('sentinelUsername') ?? '';
  const sentinelPassword = params.get('sentinelPassword') ?? '';
  return {
    sentinels,
    name,
    ...(username === '' ? {} : { username }),
    ...(password === '' ? {} : { password }),
    ...(sentinelUsername === '' ? {} : { sentinelUsername }),
    ...(sentinelPassword === '' ? {} : { sentinelPassword }),
    tls: scheme[1] === 'rediss',
  };
}

/** `url` with its passwords replaced by `***`, for messages. */
export function redactSentinelUrl(url: string): string {
  return url
    .replace(/^(rediss?:\/\/[^:/@]*:)[^@/]*@/, '$1***@')
    .replace(/([?&]sentinelPassword=)[^&]*/, '$1***');
}

function invalidSentinelUrl(url: string, reason: string): FlowfleetError {
  const shown = redactSentinelUrl(url);
  return new FlowfleetError(
    'REDIS_URL_INVALID',
    `REDIS_URL ${shown} (FLOWFLEET_REDIS_MODE=sentinel; expected ` +
      `redis://[user:password@]host:port[,host:port…]/<master-name>): ${reason}`,
    { details: { url: shown, reason } },
  );
}
