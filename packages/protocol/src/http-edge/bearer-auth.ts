import { createHash, timingSafeEqual } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';

/** A caller's role. trainer: mutations (and every read); viewer: reads; worker: results, blobs. */
export type Role = 'trainer' | 'viewer' | 'worker';

/**
 * The bearer token of each role the server grants (the coordinator: all three; a worker's peer
 * server: the fleet's worker token); `undefined` turns auth off (every caller holds every role).
 */
export type BearerTokens = Readonly<Partial<Record<Role, string>>>;

/** What each token grants: trainer implies viewer. */
const GRANTS: Readonly<Record<Role, readonly Role[]>> = {
  trainer: ['trainer', 'viewer'],
  viewer: ['viewer'],
  worker: ['worker'],
};

const ALL_ROLES: readonly Role[] = ['trainer', 'viewer', 'worker'];

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Resolves bearer tokens to roles in constant time per token (digests are compared, so token
 * length leaks nothing) and decides access to a route: the one auth check of the coordinator and
 * of every worker's peer server.
 */
export class BearerAuth {
  readonly #tokens: readonly { role: Role; digest: Buffer }[] | undefined;

  constructor(tokens: BearerTokens | undefined) {
    this.#tokens =
      tokens === undefined
        ? undefined
        : ALL_ROLES.flatMap((role) => {
            const token = tokens[role];
            return token === undefined ? [] : [{ role, digest: digest(token) }];
          });
  }

  /** True when tokens are configured. */
  get enabled(): boolean {
    return this.#tokens !== undefined;
  }

  /** The roles an `Authorization` header grants (empty when absent or unknown). */
  rolesFor(authorization: string | undefined): readonly Role[] {
    if (this.#tokens === undefined) return ALL_ROLES;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (match?.[1] === undefined) return [];
    const presented = digest(match[1]);
    let granted: readonly Role[] = [];
    for (const token of this.#tokens) {
      // No early exit: every configured token is compared.
      if (timingSafeEqual(presented, token.digest)) granted = GRANTS[token.role];
    }
    return granted;
  }

  /**
   * Checks that the caller holds one of `allowed` (an empty list means the route is public).
   * @throws FlowfleetError `API_UNAUTHORIZED` (no or unknown token), `API_FORBIDDEN` (lesser role).
   */
  authorize(authorization: string | undefined, allowed: readonly Role[]): readonly Role[] {
    if (allowed.length === 0) return [];
    const roles = this.rolesFor(authorization);
    if (roles.length === 0) {
      throw new FlowfleetError(
        'API_UNAUTHORIZED',
        authorization === undefined
          ? 'missing bearer token (Authorization: Bearer <token>)'
          : 'unknown bearer token',
        { details: { required: allowed } },
      );
    }
    if (!allowed.some((role) => roles.includes(role))) {
      throw new FlowfleetError(
        'API_FORBIDDEN',
        `this route needs the ${allowed.join(' or ')} role; the token grants ${roles.join(', ')}`,
        { details: { required: allowed, granted: roles } },
      );
    }
    return roles;
  }
}
