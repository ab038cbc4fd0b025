// Helpers of the checkpoint, delta and LoRA sync tests: raw uploads and syncs through the HTTP
// API, acks read back from Redis, and rollouts compared bit for bit.
import { coordinatorKeys } from '@flowfleet/coordinator';
import {
  bfloat16ToFloat32,
  float32ToBfloat16,
  parseSafetensorsHeader,
  readHeaderLength,
  readRolloutFile,
  writeSafetensors,
  type SafetensorsTensor,
} from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import { SyncAckSchema, type SyncAck } from '@flowfleet/protocol';
import type { FlowfleetWorker } from '@flowfleet/worker';
import { tinyRollout, waitUntil, type TestFleet } from './fleet-fixture.js';

/** PUT /v1/blobs; the stored sha256. */
export async function upload(fleet: TestFleet, bytes: Uint8Array): Promise<string> {
  const response = await fleet.api('/v1/blobs', {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (response.status !== 201) throw new Error(`upload: ${await response.text()}`);
  return ((await response.json()) as { sha256: string }).sha256;
}

/** POST /v1/weights/:component/sync with `body`; the status and the JSON answer. */
export async function postSync(
  fleet: TestFleet,
  component: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fleet.api(`/v1/weights/${component}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** POST a sync that must be accepted. */
export async function syncOk(fleet: TestFleet, component: string, body: unknown): Promise<void> {
  const { status, json } = await postSync(fleet, component, body);
  if (status !== 202) throw new Error(`sync: ${status} ${JSON.stringify(json)}`);
}

/** Waits until every worker acked `version` of `component`; their acks by worker id. */
export function acksOf(
  fleet: TestFleet,
  workers: readonly FlowfleetWorker[],
  component: string,
  version: number,
): Promise<Record<string, SyncAck>> {
  return waitUntil(async () => {
    const raw = await fleet.redis.hgetall(coordinatorKeys(fleet.prefix).acks(component, version));
    const acks = Object.fromEntries(
      Object.entries(raw).map(([id, json]) => [id, SyncAckSchema.parse(JSON.parse(json))]),
    );
    return workers.every((w) => acks[w.workerId] !== undefined) ? acks : undefined;
  }, `acks of ${component} v${version}`);
}

/** A rollout on exactly `version` of the dit: its latents and log-probs as bytes. */
export async function rolloutOn(fleet: TestFleet, version: number): Promise<Buffer> {
  const { id } = await fleet.enqueue(tinyRollout({ weights: { dit: { exact: version } } }));
  const done = await fleet.waitForCompletion(id);
  if (done.summary?.weightsVersions['dit'] !== version) throw new Error('ran on another version');
  const file = readRolloutFile(await fleet.result(id));
  const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return Buffer.concat([
    bytes(file.latents),
    file.logProbs === null ? Buffer.alloc(0) : bytes(file.logProbs),
  ]);
}

/** Float32 tensors as BF16 (rounded) and as the float32 those BF16 values widen to. */
export function bf16Pair(tensors: ReadonlyMap<string, TensorData>): {
  bf16: Map<string, SafetensorsTensor>;
  widened: Map<string, TensorData>;
} {
  const bf16 = new Map<string, SafetensorsTensor>();
  const widened = new Map<string, TensorData>();
  for (const [name, tensor] of tensors) {
    const bits = float32ToBfloat16(tensor.data as Float32Array);
    bf16.set(name, { dtype: 'BF16', shape: tensor.dims, data: bits });
    widened.set(name, { dtype: 'float32', dims: tensor.dims, data: bfloat16ToFloat32(bits) });
  }
  return { bf16, widened };
}

/** A safetensors file of `tensors` under `keyOf(name)`. */
export function fileOf(
  tensors: ReadonlyMap<string, SafetensorsTensor>,
  keyOf: (name: string) => string = (name) => name,
): Uint8Array {
  return writeSafetensors(new Map([...tensors].map(([name, t]) => [keyOf(name), t])));
}

/** The absolute byte span of `tensor` in a safetensors file. */
export function spanOf(file: Uint8Array, tensor: string): { begin: number; end: number } {
  const n = readHeaderLength(file.subarray(0, 8), file.length);
  const header = parseSafetensorsHeader(file.subarray(8, 8 + n), file.length);
  const [begin, end] = header.tensors.get(tensor)!.dataOffsets;
  return { begin: header.dataStart + begin, end: header.dataStart + end };
}
