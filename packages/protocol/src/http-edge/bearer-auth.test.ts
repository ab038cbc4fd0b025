import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { BearerAuth } from './bearer-auth.js';

const auth = new BearerAuth({
  trainer: 'trainer-secret-000000',
  viewer: 'viewer-secret-000000',
  worker: 'worker-secret-000000',
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not coded';
  }
  return undefined;
}

describe('BearerAuth', () => {
  it('maps tokens to roles; trainer implies viewer', () => {
    expect(auth.rolesFor('Bearer trainer-secret-000000')).toEqual(['trainer', 'viewer']);
    expect(auth.rolesFor('bearer viewer-secret-000000')).toEqual(['viewer']);
    expect(auth.rolesFor('Bearer worker-secret-000000')).toEqual(['worker']);
    expect(auth.rolesFor('Bearer trainer-secret-00000')).toEqual([]);
    expect(auth.rolesFor('Basic dHJhaW5lcg==')).toEqual([]);
    expect(auth.rolesFor(undefined)).toEqual([]);
  });

  it('answers 401 for no or unknown tokens and 403 for a lesser role', () => {
    expect(codeOf(() => auth.authorize(undefined, ['viewer']))).toBe('API_UNAUTHORIZED');
    expect(codeOf(() => auth.authorize('Bearer nope', ['viewer']))).toBe('API_UNAUTHORIZED');
    expect(codeOf(() => auth.authorize('Bearer viewer-secret-000000', ['trainer']))).toBe(
      'API_FORBIDDEN',
    );
    expect(codeOf(() => auth.authorize('Bearer worker-secret-000000', ['viewer']))).toBe(
      'API_FORBIDDEN',
    );
    expect(
      codeOf(() => auth.authorize('Bearer trainer-secret-000000', ['viewer'])),
    ).toBeUndefined();
    expect(codeOf(() => auth.authorize(undefined, []))).toBeUndefined();
  });

  it('grants every role when auth is off', () => {
    const open = new BearerAuth(undefined);
    expect(open.enabled).toBe(false);
    expect(codeOf(() => open.authorize(undefined, ['worker']))).toBeUndefined();
  });
});

describe('BearerAuth with some roles', () => {
  it('grants only the roles it has tokens for (a peer server: the worker token)', () => {
    const peer = new BearerAuth({ worker: 'worker-secret-000000' });
    expect(peer.authorize('Bearer worker-secret-000000', ['worker'])).toEqual(['worker']);
    expect(codeOf(() => peer.authorize('Bearer trainer-secret-000000', ['worker']))).toBe(
      'API_UNAUTHORIZED',
    );
    expect(codeOf(() => peer.authorize(undefined, ['worker']))).toBe('API_UNAUTHORIZED');
  });
});
