import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';

/** The result files a worker stores per job (the coordinator's RESULT_FILES). */
export type ResultFile = 'result.safetensors' | 'summary.json';

/** What became of one result upload: stored now, already stored with the same bytes, or not. */
export type ResultUploadOutcome = 'created' | 'unchanged' | 'conflict';

/** How to reach the coordinator. */
export interface CoordinatorClientOptions {
  readonly baseUrl: string;
  /** Bearer token with the `worker` role. */
  readonly token?: string | undefined;
  /** Per-request bound (default 30 s). */
  readonly requestTimeoutMs?: number;
}

/** True for failures worth retrying: the network, timeouts, 408/429 and 5xx answers. */
export function isRetryableHttpFailure(error: unknown): boolean {
  return isFlowfleetError(error) && (error.details as { retryable?: unknown }).retryable === true;
}

function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The two coordinator routes a worker calls: `GET /v1/blobs/:sha256` (weights) and
 * `PUT /v1/results/:id/:file` (idempotent result upload). One attempt per call; callers retry
 * with `isRetryableHttpFailure`.
 */
export class CoordinatorClient {
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;

  constructor(options: CoordinatorClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#headers = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
  }

  /**
   * Downloads a blob, refusing more than `maxBytes`.
   * @throws FlowfleetError WORKER_BLOB_FETCH_FAILED (`details.retryable`, `details.status`)
   */
  async fetchBlob(sha256: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    const fail = (message: string, extra: Record<string, unknown>, cause?: unknown) =>
      new FlowfleetError('WORKER_BLOB_FETCH_FAILED', `blob ${sha256}: ${message}`, {
        details: { sha256, ...extra },
        ...(cause === undefined ? {} : { cause }),
      });
    const response = await this.#request(
      `/v1/blobs/${sha256}`,
      { method: 'GET' },
      signal,
      (cause) => fail('the coordinator is unreachable', { retryable: true }, cause),
    );
    if (!response.ok) {
      const code = await errorCodeOf(response);
      throw fail(`the coordinator answered ${response.status}${code ? ` ${code}` : ''}`, {
        status: response.status,
        ...(code === undefined ? {} : { code }),
        retryable: retryableStatus(response.status),
      });
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      throw fail(`it is ${declared} bytes, more than the ${maxBytes} expected`, {
        sizeBytes: declared,
        retryable: false,
      });
    }
    try {
      return await readCapped(response, maxBytes);
    } catch (cause) {
      if (isFlowfleetError(cause)) throw cause;
      throw fail('the download was cut short', { retryable: true }, cause);
    }
  }

  /**
   * Stores one result file of a job; `conflict` when different bytes are already stored.
   * @throws FlowfleetError WORKER_RESULT_UPLOAD_FAILED (`details.retryable`, `details.status`)
   */
  async putResult(
    jobId: string,
    file: ResultFile,
    bytes: Uint8Array,
    signal?: AbortSignal,
  ): Promise<ResultUploadOutcome> {
    const fail = (message: string, extra: Record<string, unknown>, cause?: unknown) =>
      new FlowfleetError('WORKER_RESULT_UPLOAD_FAILED', `${file} of job ${jobId}: ${message}`, {
        details: { jobId, file, ...extra },
        ...(cause === undefined ? {} : { cause }),
      });
    const response = await this.#request(
      `/v1/results/${encodeURIComponent(jobId)}/${file}`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      },
      signal,
      (cause) => fail('the coordinator is unreachable', { retryable: true }, cause),
    );
    if (response.status === 201 || response.status === 200) {
      await response.body?.cancel();
      return response.status === 201 ? 'created' : 'unchanged';
    }
    const code = await errorCodeOf(response);
    if (response.status === 409 && code === 'API_RESULT_CONFLICT') return 'conflict';
    throw fail(`the coordinator answered ${response.status}${code ? ` ${code}` : ''}`, {
      status: response.status,
      ...(code === undefined ? {} : { code }),
      retryable: retryableStatus(response.status),
    });
  }

  async #request(
    path: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
    unreachable: (cause: unknown) => FlowfleetError,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      return await fetch(`${this.#baseUrl}${path}`, {
        ...init,
        headers: { ...this.#headers, ...(init.headers as Record<string, string> | undefined) },
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
    } catch (cause) {
      if (signal?.aborted === true) throw signal.reason as Error;
      throw unreachable(cause);
    }
  }
}

/** Reads a response body, failing once it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return new Uint8Array(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      throw new FlowfleetError('WORKER_BLOB_FETCH_FAILED', `blob exceeds ${maxBytes} bytes`, {
        details: { maxBytes, retryable: false },
      });
    }
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
