import { describe, expect, it } from 'vitest';
import { EgressBucket, throttled } from './egress-bucket.js';

describe('EgressBucket', () => {
  it('holds every body it paces to the rate, shared by concurrent senders', async () => {
    const bucket = new EgressBucket(4_000_000, 0);
    const body = [new Uint8Array(200_000), new Uint8Array(200_000)];
    const send = async () => {
      let total = 0;
      for await (const piece of throttled(body, bucket)) {
        expect(piece.byteLength).toBeLessThanOrEqual(64 * 1024);
        total += piece.byteLength;
      }
      return total;
    };
    const started = performance.now();
    const sent = await Promise.all([send(), send()]);
    const elapsedMs = performance.now() - started;
    expect(sent).toEqual([400_000, 400_000]);
    // 800 kB at 4 MB/s: 200 ms, whoever sends it.
    expect(elapsedMs).toBeGreaterThanOrEqual(190);
    expect(elapsedMs).toBeLessThan(1_000);
  });

  it('passes a body through unchanged without a bucket', async () => {
    const pieces: Uint8Array[] = [];
    for await (const piece of throttled([new Uint8Array(300_000)], undefined)) pieces.push(piece);
    expect(pieces.map((p) => p.byteLength)).toEqual([300_000]);
  });

  it('refuses a rate that is not a positive number', () => {
    expect(() => new EgressBucket(0)).toThrow(
      expect.objectContaining({ code: 'PROTO_INVALID_REQUEST' }),
    );
  });
});
