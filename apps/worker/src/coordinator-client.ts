import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import {
  HttpExchangeError,
  SUMMARY_BYTES_HEADER,
  httpExchange,
  type HttpExchangeRequest,
  type HttpExchangeResponse,
} from '@flowfleet/protocol';

/** What became of a result upload: stored now, already stored with the same bytes, or not. */
export type ResultUploadOutcome = 'created' | 'unchanged' | 'conflict';

/** A job's two result files, stored in one request. */
export interface ResultFiles {
  /** `summary.json`: per attempt (who ran it, timings); the first one stored stands. */
  readonly summary: Uint8Array;
  /** `result.safetensors`: a pure function of (job, weights, backend); written once. */
  readonly result: Uint8Array;
}

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

function errorCodeOf(response: HttpExchangeResponse): string | undefined {
  try {
    const body = JSON.parse(response.body.toString('utf8')) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

type Failure = (message: string, extra: Record<string, unknown>, cause?: unknown) => FlowfleetError;

/**
 * The two coordinator routes a worker calls: `GET /v1/blobs/:sha256` (weights) and
 * `PUT /v1/results/:id` (both result files, idempotent). One attempt per call; callers retry with
 * `isRetryableHttpFailure`.
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
    const fail: Failure = (message, extra, cause) =>
      new FlowfleetError('WORKER_BLOB_FETCH_FAILED', `blob ${sha256}: ${message}`, {
        details: { sha256, ...extra },
        ...(cause === undefined ? {} : { cause }),
      });
    const response = await this.#request(
      { method: 'GET', url: `/v1/blobs/${sha256}`, maxResponseBytes: maxBytes },
      signal,
      fail,
    );
    if (response.status !== 200) throw this.#statusFailure(response, fail);
    return new Uint8Array(response.body.buffer, response.body.byteOffset, response.body.byteLength);
  }

  /**
   * Stores a job's summary and result in one request; `conflict` when a different result is
   * already stored (nothing was written then).
   * @throws FlowfleetError WORKER_RESULT_UPLOAD_FAILED (`details.retryable`, `details.status`)
   */
  async putResults(
    jobId: string,
    files: ResultFiles,
    signal?: AbortSignal,
  ): Promise<ResultUploadOutcome> {
    const fail: Failure = (message, extra, cause) =>
      new FlowfleetError('WORKER_RESULT_UPLOAD_FAILED', `results of job ${jobId}: ${message}`, {
        details: { jobId, ...extra },
        ...(cause === undefined ? {} : { cause }),
      });
    const response = await this.#request(
      {
        method: 'PUT',
        url: `/v1/results/${encodeURIComponent(jobId)}`,
        headers: {
          'content-type': 'application/octet-stream',
          [SUMMARY_BYTES_HEADER]: String(files.summary.byteLength),
        },
        body: [files.summary, files.result],
      },
      signal,
      fail,
    );
    if (response.status === 201) return 'created';
    if (response.status === 200) return 'unchanged';
    if (response.status === 409 && errorCodeOf(response) === 'API_RESULT_CONFLICT')
      return 'conflict';
    throw this.#statusFailure(response, fail);
  }

  #statusFailure(response: HttpExchangeResponse, fail: Failure): FlowfleetError {
    const code = errorCodeOf(response);
    return fail(`the coordinator answered ${response.status}${code ? ` ${code}` : ''}`, {
      status: response.status,
      ...(code === undefined ? {} : { code }),
      retryable: retryableStatus(response.status),
    });
  }

  async #request(
    request: HttpExchangeRequest,
    signal: AbortSignal | undefined,
    fail: Failure,
  ): Promise<HttpExchangeResponse> {
    try {
      return await httpExchange({
        ...request,
        url: `${this.#baseUrl}${request.url}`,
        headers: { ...this.#headers, ...request.headers },
        timeoutMs: this.#timeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (cause) {
      if (!(cause instanceof HttpExchangeError)) throw cause;
      switch (cause.kind) {
        case 'aborted':
          throw (signal?.reason as Error | undefined) ?? cause;
        case 'too-large':
          throw fail(cause.message, { retryable: false }, cause);
        case 'timeout':
          throw fail(`no answer within ${this.#timeoutMs} ms`, { retryable: true }, cause);
        case 'network':
          throw fail('the coordinator is unreachable', { retryable: true }, cause);
      }
    }
  }
}
