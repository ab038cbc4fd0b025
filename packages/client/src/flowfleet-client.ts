import { FlowfleetError } from '@flowfleet/errors';
import {
  readRolloutFile,
  RolloutSummarySchema,
  type RolloutFile,
  type RolloutSummary,
} from '@flowfleet/formats';
import {
  CancelledRolloutSchema,
  EnqueuedRolloutSchema,
  FleetSchema,
  HealthSchema,
  IDEMPOTENCY_KEY_HEADER,
  JobStatusSchema,
  LanesSchema,
  MatrixSchema,
  OpenApiDocumentSchema,
  ResultUploadSchema,
  SUMMARY_BYTES_HEADER,
  JOB_LOCK_HEADER,
  ScalingSchema,
  StoredBlobSchema,
  SyncAcceptedSchema,
  WeightReportSchema,
  type CancelledRollout,
  type EnqueuedRollout,
  type Fleet,
  type Health,
  type JobStatus,
  type Lanes,
  type Matrix,
  type OpenApiDocument,
  type PeftLoraConfigJson,
  type ResultUpload,
  type RolloutRequestInput,
  type Scaling,
  type StoredBlob,
  type SyncAccepted,
  type WeightReport,
} from '@flowfleet/protocol';
import type { z } from 'zod';
import {
  checkPositive,
  resolveClientOptions,
  type FlowfleetClientOptions,
} from './client-options.js';
import { enqueueRound, type RoundCommon, type RoundGroup } from './enqueue-round.js';
import { HttpTransport, type CallOptions } from './http-transport.js';
import {
  pushCheckpoint,
  type PushCheckpointOptions,
  type PushedCheckpoint,
} from './push-checkpoint.js';
import type { HashedBody } from './file-body.js';
import { sha256Hex } from './sha256-hex.js';
import { waitForJob, type WaitForOptions } from './wait-for-job.js';
import {
  waitForSync,
  type SyncProgress,
  type SyncTarget,
  type WaitForSyncOptions,
} from './wait-for-sync.js';

const segment = (value: string): string => encodeURIComponent(value);

/** Options of {@link FlowfleetClient.syncWeights}. */
export interface SyncWeightsOptions extends CallOptions {
  /** Sync the blob as a LoRA adapter: its base version, PEFT's config, the layers it must bind. */
  readonly lora?: {
    readonly base: number;
    readonly config: PeftLoraConfigJson;
    readonly expectLayers?: number;
  };
}

/** Options of {@link FlowfleetClient.enqueueRollouts}. */
export interface EnqueueOptions extends CallOptions {
  /**
   * Names this enqueue (a UUID; default: a fresh one per call). Every try sends it as the
   * Idempotency-Key header, so a retried or repeated request with the same key enqueues once.
   */
  readonly idempotencyKey?: string;
}

/** A long-polling status call: what the caller last saw, and how long the server may wait. */
export interface StatusWait {
  readonly waitMs: number;
  readonly seen: Pick<JobStatus, 'status' | 'progress' | 'attempts'>;
}

/**
 * A typed client for every coordinator route. Every JSON answer is validated (a bad one is
 * `CLIENT_BAD_RESPONSE`); an error answer becomes a FlowfleetError with the server's code;
 * network failures are `CLIENT_UNREACHABLE`. Idempotent calls (reads, blob and result uploads,
 * enqueue with its Idempotency-Key) are retried per the retry policy (README); sync is sent once.
 */
export class FlowfleetClient {
  readonly #http: HttpTransport;
  readonly #timeoutMs: number;
  readonly baseUrl: string;

  private constructor(options: FlowfleetClientOptions) {
    const resolved = resolveClientOptions(options);
    this.baseUrl = resolved.baseUrl;
    this.#timeoutMs = resolved.timeoutMs;
    this.#http = new HttpTransport(resolved);
  }

  /**
   * A client for the coordinator at `options.baseUrl`; nothing is sent until a method is called.
   * @throws FlowfleetError CLIENT_INVALID_OPTIONS
   */
  static create(options: FlowfleetClientOptions): FlowfleetClient {
    return new FlowfleetClient(options);
  }

  /**
   * Enqueues one rollout (a prompt × a group of seeds) on the lane of its requirements. The
   * request carries an Idempotency-Key, so it is retried like a read: a retry whose first try
   * did reach the coordinator answers the job that try enqueued.
   * @throws FlowfleetError PROTO_INVALID_REQUEST, API_NO_CAPACITY (unless `waitForCapacity`),
   *   API_WEIGHT_VERSION_UNAVAILABLE, API_UNAUTHORIZED, API_FORBIDDEN, and the transport codes
   */
  enqueueRollouts(request: RolloutRequestInput, call?: EnqueueOptions): Promise<EnqueuedRollout> {
    const key = call?.idempotencyKey ?? globalThis.crypto.randomUUID();
    return this.#http.json(
      {
        method: 'POST',
        path: '/v1/rollouts',
        json: request,
        headers: { [IDEMPOTENCY_KEY_HEADER]: key },
        idempotent: true,
        ...withCall(call),
      },
      EnqueuedRolloutSchema,
    );
  }

  /**
   * Enqueues one rollout per group (`common` settings with each prompt and seeds), a few at a
   * time, and answers them in the order of `groups`. On the first failure no further group is
   * sent; the error keeps its code and lists the rollouts already enqueued in
   * `details.enqueued`.
   * @throws as {@link FlowfleetClient.enqueueRollouts}
   */
  enqueueRound(
    groups: readonly RoundGroup[],
    common: RoundCommon,
    call?: CallOptions,
  ): Promise<EnqueuedRollout[]> {
    return enqueueRound(this, groups, common, call);
  }

  /**
   * A rollout job's status. With `wait` (a long-poll), the coordinator answers once the job
   * differs from `wait.seen`, finishes, or `wait.waitMs` (≤ 30 000) passes; the call's timeout is
   * stretched by `waitMs`.
   * @throws FlowfleetError API_JOB_NOT_FOUND, transport codes
   */
  status(id: string, call?: CallOptions, wait?: StatusWait): Promise<JobStatus> {
    const path = `/v1/rollouts/${segment(id)}`;
    if (wait === undefined) return this.#get(path, JobStatusSchema, call);
    const query = new URLSearchParams({
      waitMs: String(wait.waitMs),
      status: wait.seen.status,
      step: String(wait.seen.progress.step),
      attempts: String(wait.seen.attempts),
    });
    const timeoutMs = (call?.timeoutMs ?? this.#timeoutMs) + wait.waitMs;
    return this.#get(`${path}?${query.toString()}`, JobStatusSchema, { ...call, timeoutMs });
  }

  /**
   * Cancels a queued rollout (trainer role): it is removed from its lane and never runs. A running
   * job is not abandoned — it finishes and stores its result — so cancelling one is refused, as
   * is cancelling a finished one. Retried like a read: a retry after a cancel that landed answers
   * API_JOB_NOT_FOUND.
   * @throws FlowfleetError API_JOB_NOT_CANCELLABLE (`details.status`: active, completed or failed),
   *   API_JOB_NOT_FOUND, API_FORBIDDEN, transport codes
   */
  cancelRollout(id: string, call?: CallOptions): Promise<CancelledRollout> {
    return this.#http.json(
      {
        method: 'DELETE',
        path: `/v1/rollouts/${segment(id)}`,
        idempotent: true,
        ...withCall(call),
      },
      CancelledRolloutSchema,
    );
  }

  /**
   * Waits until job `id` completes and answers its final status (polling with backoff).
   * @throws FlowfleetError CLIENT_JOB_FAILED (the server's envelope in `details.error`),
   *   CLIENT_TIMEOUT, CLIENT_ABORTED, and the codes of {@link FlowfleetClient.status}
   */
  waitFor(id: string, options?: WaitForOptions): Promise<JobStatus> {
    return waitForJob(this, id, options);
  }

  /**
   * A completed rollout's result file, read by formats' RolloutFile v1 reader (typed arrays that
   * view the downloaded bytes).
   * @throws FlowfleetError API_RESULT_NOT_FOUND, API_JOB_NOT_FOUND, FMT_SAFETENSORS_INVALID,
   *   FMT_ROLLOUT_INVALID, transport codes
   */
  async getResult(id: string, call?: CallOptions): Promise<RolloutFile> {
    return readRolloutFile(await this.getResultBytes(id, call));
  }

  /** A completed rollout's safetensors bytes. @throws as {@link FlowfleetClient.getResult} */
  getResultBytes(id: string, call?: CallOptions): Promise<Uint8Array> {
    return this.#http.bytes({
      method: 'GET',
      path: `/v1/rollouts/${segment(id)}/result`,
      idempotent: true,
      ...withCall(call),
    });
  }

  /**
   * Stores job `id`'s `summary.json` and `result.safetensors` in one request (worker role), as the
   * attempt that holds the job with `lockToken`. The result is written once: `created`, or
   * `unchanged` when the same bytes were stored before; the first summary stored stands
   * (`summary: 'kept'` after that).
   * @throws FlowfleetError API_RESULT_CONFLICT (a different result is stored; nothing was
   *   written), API_RESULT_NOT_HOLDER (`lockToken` is not the job's lock), API_RESULT_MISMATCH
   *   (the summary does not describe the job's request), API_JOB_NOT_FOUND, API_BLOB_TOO_LARGE,
   *   API_INVALID_BODY, transport codes
   */
  uploadResults(
    id: string,
    lockToken: string,
    files: { readonly summary: Uint8Array; readonly result: Uint8Array },
    call?: CallOptions,
  ): Promise<ResultUpload> {
    return this.#http.json(
      {
        method: 'PUT',
        path: `/v1/results/${segment(id)}`,
        headers: {
          [SUMMARY_BYTES_HEADER]: String(files.summary.byteLength),
          [JOB_LOCK_HEADER]: lockToken,
        },
        bytes: [files.summary, files.result],
        idempotent: true,
        ...withCall(call),
      },
      ResultUploadSchema,
    );
  }

  /**
   * The summary stored with job `id`'s result (worker or viewer role): the first stored stands.
   * @throws FlowfleetError API_RESULT_NOT_FOUND, API_JOB_NOT_FOUND, transport codes
   */
  storedSummary(id: string, call?: CallOptions): Promise<RolloutSummary> {
    return this.#get(`/v1/results/${segment(id)}/summary`, RolloutSummarySchema, call);
  }

  /** Every registered worker, live and dead. @throws transport codes */
  fleet(call?: CallOptions): Promise<Fleet> {
    return this.#get('/v1/fleet', FleetSchema, call);
  }

  /**
   * The live workers that can serve `lane`: the ids behind its `eligibleWorkers` count.
   * @throws FlowfleetError API_LANE_NOT_FOUND, API_INVALID_PARAMS, transport codes
   */
  laneWorkers(lane: string, call?: CallOptions): Promise<Fleet> {
    return this.#get(`/v1/fleet?lane=${segment(lane)}`, FleetSchema, call);
  }

  /** The capability matrix with lane backlog and capacity. @throws transport codes */
  matrix(call?: CallOptions): Promise<Matrix> {
    return this.#get('/v1/fleet/matrix', MatrixSchema, call);
  }

  /** Every recorded lane. @throws transport codes */
  lanes(call?: CallOptions): Promise<Lanes> {
    return this.#get('/v1/lanes', LanesSchema, call);
  }

  /**
   * Scaling hints per device class (`cuda/sm90`): live workers, capacity, exclusive and shared
   * backlog, desiredReplicas and the rule; with `deviceClass`, that class only.
   * @throws FlowfleetError API_DEVICE_CLASS_NOT_FOUND, API_INVALID_PARAMS, transport codes
   */
  scaling(query: { readonly deviceClass?: string } = {}, call?: CallOptions): Promise<Scaling> {
    const filter =
      query.deviceClass === undefined ? '' : `?deviceClass=${segment(query.deviceClass)}`;
    return this.#get(`/v1/scaling${filter}`, ScalingSchema, call);
  }

  /**
   * Uploads a blob (e.g. a weights safetensors) and checks that the coordinator's sha256 and size
   * equal those of the bytes sent.
   * @throws FlowfleetError CLIENT_BLOB_MISMATCH, API_BLOB_TOO_LARGE, transport codes
   */
  async uploadBlob(bytes: Uint8Array, call?: CallOptions): Promise<StoredBlob> {
    const [local, stored] = await Promise.all([
      sha256Hex(bytes),
      this.#http.json(
        { method: 'PUT', path: '/v1/blobs', bytes, idempotent: true, ...withCall(call) },
        StoredBlobSchema,
      ),
    ]);
    if (stored.sha256 !== local || stored.sizeBytes !== bytes.byteLength) {
      throw new FlowfleetError(
        'CLIENT_BLOB_MISMATCH',
        `the coordinator stored ${stored.sha256} (${stored.sizeBytes} bytes) for bytes whose sha256 is ${local} (${bytes.byteLength} bytes)`,
        { details: { expected: { sha256: local, sizeBytes: bytes.byteLength }, received: stored } },
      );
    }
    return stored;
  }

  /**
   * Uploads a blob read from its source while it is sent (`fileBody(path)`: one chunk in memory
   * at a time, so its size is bounded by the coordinator's FLOWFLEET_MAX_BLOB_BYTES, not by a
   * buffer), and checks that the coordinator's sha256 and size equal those of the bytes read.
   * @throws FlowfleetError CLIENT_BLOB_MISMATCH, API_BLOB_TOO_LARGE, FMT_FILE_IO, transport codes
   */
  async uploadBlobStream(body: HashedBody, call?: CallOptions): Promise<StoredBlob> {
    const stored = await this.#http.json(
      { method: 'PUT', path: '/v1/blobs', bytes: body, idempotent: true, ...withCall(call) },
      StoredBlobSchema,
    );
    const local = body.readBack();
    if (
      local === undefined ||
      stored.sha256 !== local.sha256 ||
      stored.sizeBytes !== local.sizeBytes ||
      local.sizeBytes !== body.sizeBytes
    ) {
      throw new FlowfleetError(
        'CLIENT_BLOB_MISMATCH',
        `the coordinator stored ${stored.sha256} (${stored.sizeBytes} bytes) for a body read as ${local?.sha256 ?? 'unfinished'} (${local?.sizeBytes ?? 0} of ${body.sizeBytes} bytes)`,
        { details: { expected: local ?? { sizeBytes: body.sizeBytes }, received: stored } },
      );
    }
    return stored;
  }

  /**
   * Downloads a blob and checks its sha256.
   * @throws FlowfleetError CLIENT_BLOB_MISMATCH, API_BLOB_NOT_FOUND, transport codes
   */
  async downloadBlob(sha256: string, call?: CallOptions): Promise<Uint8Array> {
    const bytes = await this.getBlobBytes(sha256, call);
    const local = await sha256Hex(bytes);
    if (local !== sha256) {
      throw new FlowfleetError('CLIENT_BLOB_MISMATCH', `blob ${sha256} arrived as ${local}`, {
        details: { expected: { sha256 }, received: { sha256: local, sizeBytes: bytes.byteLength } },
      });
    }
    return bytes;
  }

  /**
   * A blob's bytes as stored, unchecked (for a caller that verifies them itself, as the worker
   * does with the sync's sha256 and size). @throws FlowfleetError API_BLOB_NOT_FOUND, transport codes
   */
  getBlobBytes(sha256: string, call?: CallOptions): Promise<Uint8Array> {
    return this.#http.bytes({
      method: 'GET',
      path: `/v1/blobs/${segment(sha256)}`,
      idempotent: true,
      ...withCall(call),
    });
  }

  /**
   * Bytes `[start, end)` of a blob as stored, unchecked (`Range: bytes=start-(end-1)`; the worker
   * verifies each tensor of a range against its manifest digest).
   * @throws FlowfleetError API_BLOB_NOT_FOUND, API_RANGE_NOT_SATISFIABLE, CLIENT_BAD_RESPONSE (an
   *   answer of another length), CLIENT_INVALID_OPTIONS (an empty or malformed range), transport
   *   codes
   */
  async getBlobRange(
    sha256: string,
    start: number,
    end: number,
    call?: CallOptions,
  ): Promise<Uint8Array> {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) {
      throw new FlowfleetError(
        'CLIENT_INVALID_OPTIONS',
        `bytes [${start}, ${end}) is not a range`,
        {
          details: { option: 'range', start, end },
        },
      );
    }
    const path = `/v1/blobs/${segment(sha256)}`;
    const bytes = await this.#http.bytes({
      method: 'GET',
      path,
      headers: { range: `bytes=${start}-${end - 1}` },
      idempotent: true,
      ...withCall({ maxResponseBytes: end - start, ...call }),
    });
    if (bytes.byteLength !== end - start) {
      throw new FlowfleetError(
        'CLIENT_BAD_RESPONSE',
        `GET ${path} bytes ${start}-${end - 1} answered ${bytes.byteLength} bytes, not ${end - start}`,
        { details: { sha256, start, end, received: bytes.byteLength } },
      );
    }
    return bytes;
  }

  /**
   * Makes uploaded blobs the next weight version of `component` (recorded, broadcast): one
   * safetensors file (`blobs` a sha256), the shards of a sharded checkpoint in file order (an
   * array), or with `options.lora` a LoRA adapter merged into version `lora.base`.
   * @throws FlowfleetError API_STALE_VERSION, API_BLOB_NOT_FOUND, API_SYNC_BASE_UNKNOWN,
   *   FMT_SAFETENSORS_INVALID, FMT_CHECKPOINT_INVALID, MODEL_LORA_UNBOUND, MODEL_LORA_INVALID,
   *   API_INVALID_BODY, CLIENT_INVALID_OPTIONS (an adapter given as shards), transport codes
   */
  syncWeights(
    component: string,
    version: number,
    blobs: string | readonly string[],
    options: SyncWeightsOptions = {},
  ): Promise<SyncAccepted> {
    const { lora, ...call } = options;
    if (lora !== undefined && typeof blobs !== 'string') {
      throw new FlowfleetError('CLIENT_INVALID_OPTIONS', 'a LoRA adapter is one blob, not shards', {
        details: { option: 'lora' },
      });
    }
    const named =
      typeof blobs === 'string'
        ? { sha256: blobs }
        : { shards: blobs.map((sha256) => ({ sha256 })) };
    return this.#http.json(
      {
        method: 'POST',
        path: `/v1/weights/${segment(component)}/sync`,
        json: { version, ...named, ...(lora === undefined ? {} : { lora }) },
        idempotent: false,
        ...withCall(call),
      },
      SyncAcceptedSchema,
    );
  }

  /**
   * Uploads a checkpoint from disk (a safetensors file, a directory with one, or a sharded
   * directory with its `*.safetensors.index.json`) and syncs it; with `options.lora`, as an
   * adapter (its config from `adapter_config.json` beside it unless given).
   * @throws as {@link pushCheckpoint}
   */
  pushCheckpoint(
    component: string,
    path: string,
    options?: PushCheckpointOptions,
  ): Promise<PushedCheckpoint> {
    return pushCheckpoint(this, component, path, options);
  }

  /**
   * A component's current version and its newest `limit` versions (default 20, at most 100) with
   * each worker's ack. @throws FlowfleetError API_INVALID_PARAMS, transport codes
   */
  weights(
    component: string,
    query: { readonly limit?: number } = {},
    call?: CallOptions,
  ): Promise<WeightReport> {
    const limit =
      query.limit === undefined ? '' : `?limit=${checkPositive(query.limit, 'limit', true)}`;
    return this.#get(`/v1/weights/${segment(component)}${limit}`, WeightReportSchema, call);
  }

  /**
   * Waits until `target` live workers ({minWorkers: n}, or {all: true}: every live worker, at
   * least one) acked `version` of `component` ok.
   * @throws FlowfleetError CLIENT_SYNC_FAILED, CLIENT_UNKNOWN_VERSION, CLIENT_TIMEOUT,
   *   CLIENT_ABORTED, CLIENT_INVALID_OPTIONS, transport codes
   */
  waitForSync(
    component: string,
    version: number,
    target: SyncTarget,
    options?: WaitForSyncOptions,
  ): Promise<SyncProgress> {
    return waitForSync(this, component, version, target, options);
  }

  /** Liveness and Redis reachability. @throws FlowfleetError COORD_REDIS_UNAVAILABLE, transport codes */
  health(call?: CallOptions): Promise<Health> {
    return this.#get('/healthz', HealthSchema, call);
  }

  /** The Prometheus metrics text. @throws transport codes */
  metrics(call?: CallOptions): Promise<string> {
    return this.#http.text({
      method: 'GET',
      path: '/metrics',
      idempotent: true,
      ...withCall(call),
    });
  }

  /** The coordinator's OpenAPI 3.1 document. @throws transport codes */
  openapi(call?: CallOptions): Promise<OpenApiDocument> {
    return this.#get('/openapi.json', OpenApiDocumentSchema, call);
  }

  /** Closes the client's connections to the coordinator (calls in flight finish). Idempotent. */
  close(): Promise<void> {
    return this.#http.close();
  }

  #get<S extends z.ZodType>(path: string, schema: S, call: CallOptions | undefined) {
    return this.#http.json({ method: 'GET', path, idempotent: true, ...withCall(call) }, schema);
  }
}

function withCall(call: CallOptions | undefined): { call?: CallOptions } {
  return call === undefined ? {} : { call };
}

/** Same as {@link FlowfleetClient.create}. @throws FlowfleetError CLIENT_INVALID_OPTIONS */
export function createClient(options: FlowfleetClientOptions): FlowfleetClient {
  return FlowfleetClient.create(options);
}
