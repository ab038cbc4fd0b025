// What the sync edge refuses (issue 22, item 4): one rule for a single-file checkpoint and a
// shard — the same malformed bytes are 400 FMT_SAFETENSORS_INVALID either way and nothing is
// recorded — and a bounded version number (a version at the bound would leave the component
// unable to sync again; above it is refused, in a sync and in a rollout's weight requirement).
import { writeSafetensors } from '@flowfleet/formats';
import { fleetKeys, MAX_WEIGHT_VERSION } from '@flowfleet/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { rolloutBody, startTestCoordinator, type TestCoordinator } from './fixture.js';

let server: RedisServer;
let fixture: TestCoordinator;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name);
});
afterEach(async () => {
  await fixture?.close();
});

async function upload(bytes: Uint8Array): Promise<string> {
  const response = await fetch(`${fixture.url}/v1/blobs`, {
    method: 'PUT',
    headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { sha256: string }).sha256;
}

function sync(body: unknown) {
  return fixture.coordinator.app.inject({
    method: 'POST',
    url: '/v1/weights/dit/sync',
    headers: fixture.auth('trainer'),
    payload: body as Record<string, unknown>,
  });
}

/** A safetensors file of `header` (JSON) and `data`, with the header length written as given. */
function rawFile(header: string, data: Uint8Array, headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(header);
  const bytes = new Uint8Array(8 + json.length + data.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  bytes.set(json, 8);
  bytes.set(data, 8 + json.length);
  return bytes;
}

const good = writeSafetensors({
  a: { dtype: 'F32', shape: [2], data: Float32Array.from([1, 2]) },
});
const eight = new Uint8Array(8);

/** Files a shard upload is refused for, by what is wrong with them. */
const MALFORMED: Readonly<Record<string, Uint8Array>> = {
  text: new TextEncoder().encode('not a checkpoint at all'),
  'shorter than its length prefix': good.subarray(0, 7),
  'truncated data': good.subarray(0, good.length - 3),
  'header longer than the file': rawFile('{}', eight, 4096),
  'header not JSON': rawFile('{"a": ', eight),
  'header a JSON array': rawFile('[1, 2]', eight),
  'unknown dtype': rawFile('{"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}', eight),
  'offsets past the data': rawFile(
    '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}}',
    eight,
  ),
  'shape and span disagree': rawFile(
    '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}',
    eight,
  ),
  'overlapping tensors': rawFile(
    '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
    eight,
  ),
  'negative shape': rawFile('{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', eight),
};

describe('the sync edge', () => {
  it('refuses a malformed single-file checkpoint exactly as it refuses the same bytes as a shard', async () => {
    const keys = fleetKeys(fixture.prefix);
    const answers: Record<string, unknown> = {};
    let version = 0;
    for (const [what, bytes] of Object.entries(MALFORMED)) {
      const sha256 = await upload(bytes);
      version += 1;
      const single = await sync({ version, sha256 });
      const shard = await sync({ version, shards: [{ sha256 }] });
      answers[what] = [single.statusCode, single.json().code, shard.statusCode, shard.json().code];
    }
    const refused = [400, 'FMT_SAFETENSORS_INVALID', 400, 'FMT_SAFETENSORS_INVALID'];
    expect(answers).toEqual(Object.fromEntries(Object.keys(MALFORMED).map((k) => [k, refused])));
    expect(await fixture.redis.exists(keys.weights('dit'))).toBe(0);
    // The well-formed file is accepted either way.
    const sha256 = await upload(good);
    expect((await sync({ version: 1, sha256 })).statusCode).toBe(202);
    expect((await sync({ version: 2, shards: [{ sha256 }] })).statusCode).toBe(202);
  });

  it('bounds the version: above MAX_WEIGHT_VERSION a sync and a requirement are refused', async () => {
    expect(MAX_WEIGHT_VERSION).toBe(2 ** 31 - 1);
    const sha256 = await upload(good);
    for (const version of [Number.MAX_SAFE_INTEGER, MAX_WEIGHT_VERSION + 1]) {
      const refused = await sync({ version, sha256 });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().code).toBe('API_INVALID_BODY');
    }
    expect(await fixture.redis.exists(fleetKeys(fixture.prefix).weights('dit'))).toBe(0);
    expect((await sync({ version: MAX_WEIGHT_VERSION, sha256 })).statusCode).toBe(202);
    for (const requirement of [{ min: MAX_WEIGHT_VERSION + 1 }, { exact: 2 ** 53 - 1 }]) {
      const response = await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: rolloutBody({ weights: { dit: requirement } }),
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().code).toBe('PROTO_INVALID_REQUEST');
    }
  });
});
