// The dashboard accepts `?token=` on `/`; fastify logs request URLs. No token may reach the log.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCoordinator, type Coordinator } from '@flowfleet/coordinator';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../coordinator/fixture.js';

const lines: string[] = [];
let coordinator: Coordinator;
let blobDir: string;

beforeAll(async () => {
  blobDir = await mkdtemp(join(tmpdir(), 'flowfleet-dash-log-'));
  // Never started: these routes answer without Redis, and inject() needs no listening socket.
  coordinator = createCoordinator({
    redisUrl: 'redis://127.0.0.1:1',
    tokens: TOKENS,
    blobDir,
    logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
  });
});

afterAll(async () => {
  await coordinator?.close();
  await rm(blobDir, { recursive: true, force: true });
});

describe('query tokens stay out of the log', () => {
  it('logs the URL of /?token= with the token redacted, for good and bad tokens alike', async () => {
    const good = await coordinator.app.inject({ url: `/?token=${TOKENS.viewer}&x=1` });
    expect(good.statusCode).toBe(200);
    expect(good.headers['set-cookie']).toContain('HttpOnly');
    const bad = await coordinator.app.inject({ url: '/?token=bogus-token-value-12345' });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['content-type']).toContain('text/html');
    const api = await coordinator.app.inject({ url: `/v1/fleet?token=${TOKENS.trainer}` });
    expect(api.statusCode).toBe(401);

    const logged = lines.join('');
    expect(logged).toContain('"url":"/?token=[redacted]&x=1"');
    expect(logged).toContain('"url":"/v1/fleet?token=[redacted]"');
    for (const secret of [TOKENS.viewer, TOKENS.trainer, 'bogus-token-value-12345']) {
      expect(logged).not.toContain(secret);
    }
  });
});
