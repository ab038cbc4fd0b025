import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestCoordinator, type TestCoordinator } from './fixture.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
  fixture = await startTestCoordinator(server.url, 'auth');
});

afterAll(async () => {
  await fixture?.close();
  await server?.stop();
});

/** A concrete URL for a route pattern (parameters filled with well-formed values). */
function concreteUrl(pattern: string): string {
  return pattern
    .replace(':id', '00000000-0000-4000-8000-000000000000')
    .replace(':sha256', 'a'.repeat(64))
    .replace(':component', 'dit');
}

describe('auth matrix (enumerated from the server route table)', () => {
  it('the route table comes from the server and holds the mutating routes', () => {
    const mutating = fixture.coordinator.routes.filter((route) => route.mutating);
    expect(mutating.map((route) => `${route.method} ${route.url}`).sort()).toEqual([
      'DELETE /v1/rollouts/:id',
      'POST /v1/rollouts',
      'POST /v1/weights/:component/sync',
      'PUT /v1/blobs',
      'PUT /v1/results/:id',
    ]);
    for (const route of fixture.coordinator.routes) {
      if (route.mutating) expect(route.roles).not.toContain('viewer');
    }
  });

  it('every mutating route answers 401 without a token and with a wrong one', async () => {
    for (const route of fixture.coordinator.routes.filter((r) => r.mutating)) {
      for (const headers of [{}, { authorization: 'Bearer not-a-real-token-000000' }]) {
        const response = await fixture.coordinator.app.inject({
          method: route.method,
          url: concreteUrl(route.url),
          headers: { ...headers, 'content-type': 'application/json' },
          payload: '{}',
        });
        expect(response.statusCode, `${route.method} ${route.url}`).toBe(401);
        expect(response.json()).toMatchObject({ code: 'API_UNAUTHORIZED' });
      }
    }
  });

  it('every mutating route answers 403 to the viewer token', async () => {
    for (const route of fixture.coordinator.routes.filter((r) => r.mutating)) {
      const response = await fixture.coordinator.app.inject({
        method: route.method,
        url: concreteUrl(route.url),
        headers: { ...fixture.auth('viewer'), 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(response.json()).toMatchObject({ code: 'API_FORBIDDEN' });
    }
  });

  it('every non-public read answers 401 without a token and admits the viewer or its role', async () => {
    const reads = fixture.coordinator.routes.filter((r) => !r.mutating && r.roles.length > 0);
    expect(reads.length).toBeGreaterThan(5);
    for (const route of reads) {
      const url = concreteUrl(route.url);
      const anonymous = await fixture.coordinator.app.inject({ method: route.method, url });
      expect(anonymous.statusCode, `${route.method} ${route.url}`).toBe(401);
      const role = route.roles.includes('viewer') ? 'viewer' : (route.roles[0] ?? 'viewer');
      const allowed = await fixture.coordinator.app.inject({
        method: route.method,
        url,
        headers: fixture.auth(role),
      });
      expect([200, 404], `${route.method} ${route.url}`).toContain(allowed.statusCode);
    }
  });

  it('the trainer token implies the viewer role; the worker token does not', async () => {
    const asTrainer = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/fleet',
      headers: fixture.auth('trainer'),
    });
    expect(asTrainer.statusCode).toBe(200);
    const asWorker = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/fleet',
      headers: fixture.auth('worker'),
    });
    expect(asWorker.statusCode).toBe(403);
  });

  it('only the worker role may upload results; the trainer gets 403', async () => {
    const response = await fixture.coordinator.app.inject({
      method: 'PUT',
      url: concreteUrl('/v1/results/:id'),
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
      payload: Buffer.from('{}'),
    });
    expect(response.statusCode).toBe(403);
  });

  it('health and the OpenAPI document are public', async () => {
    for (const url of ['/healthz', '/openapi.json']) {
      const response = await fixture.coordinator.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
    }
  });
});
