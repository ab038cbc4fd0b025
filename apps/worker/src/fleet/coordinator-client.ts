import { FlowfleetClient, type RetryOptions } from '@flowfleet/client';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import type { Logger } from 'pino';

/** What became of a result upload: stored now, already stored with the same bytes, or not. */
export type ResultUploadOutcome = 'created' | 'unchanged' | 'conflict';

/** A job's two result files, stored in one request. */
export interface ResultFiles {
  /** `summary.json`: per attempt (who ran it, timings); the first one stored stands. */
  readonly summary: Uint8Array;
  /** `result.safetensors`: a pure function of (job, weights, backend); written once. */
  readonly result: Uint8Array;
}

/** How to reach the coordinator, and how long to keep trying. */
export interface CoordinatorClientOptions {
  readonly baseUrl: string;
  /** Bearer token with the `worker` role. */
  readonly token?: string | undefined;
  /** How long a result upload is retried (`FLOWFLEET_UPLOAD_RETRY_MS`). */
  readonly uploadRetryMs: number;
  /** How long a blob download is retried before the sync is acked `failed` (default 10 s). */
  readonly fetchRetryMs?: number;
  /** Each retry is logged here at warn. */
  readonly logger: Logger;
}

/**
 * The worker's coordinator calls, `GET /v1/blobs/:sha256` (weights: whole, or a byte range) and
 * `PUT /v1/results/:id` (both result files), over the SDK's transport: its retry policy, coded errors and connection
 * pool. Only the worker's reading of the answers lives here: how long to retry each, a result
 * conflict as an outcome, and an upload that failed for good as WORKER_RESULT_UPLOAD_FAILED.
 */
export class CoordinatorClient {
  readonly #client: FlowfleetClient;
  readonly #downloadRetry: RetryOptions;
  readonly #uploadRetry: RetryOptions;

  /** @throws FlowfleetError CLIENT_INVALID_OPTIONS (a malformed coordinator URL or token) */
  constructor(options: CoordinatorClientOptions) {
    const { logger } = options;
    this.#client = FlowfleetClient.create({
      baseUrl: options.baseUrl,
      ...(options.token === undefined ? {} : { token: options.token }),
      onRetry: ({ method, path, attempt, delayMs, error }) =>
        logger.warn(
          { err: error, method, path, attempt, delayMs },
          'coordinator request failed; retrying',
        ),
    });
    // Retried for as long as each bound allows, however many tries that takes.
    this.#downloadRetry = {
      attempts: Number.POSITIVE_INFINITY,
      maxDelayMs: 5_000,
      deadlineMs: options.fetchRetryMs ?? 10_000,
    };
    this.#uploadRetry = {
      attempts: Number.POSITIVE_INFINITY,
      baseDelayMs: 250,
      maxDelayMs: 4_000,
      deadlineMs: options.uploadRetryMs,
    };
  }

  /**
   * Downloads a blob as stored, refusing more than `maxBytes` (the caller verifies the bytes).
   * @throws FlowfleetError API_BLOB_NOT_FOUND, CLIENT_RESPONSE_TOO_LARGE, CLIENT_UNREACHABLE,
   *   CLIENT_TIMEOUT, CLIENT_ABORTED, … (the SDK transport's codes)
   */
  fetchBlob(sha256: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#client.getBlobBytes(sha256, {
      maxResponseBytes: maxBytes,
      retry: this.#downloadRetry,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  /**
   * Bytes `[start, end)` of a blob as stored (the caller verifies them).
   * @throws FlowfleetError API_BLOB_NOT_FOUND, API_RANGE_NOT_SATISFIABLE, CLIENT_BAD_RESPONSE,
   *   and the SDK transport's codes
   */
  fetchRange(
    sha256: string,
    start: number,
    end: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    return this.#client.getBlobRange(sha256, start, end, {
      retry: this.#downloadRetry,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  /**
   * Stores a job's summary and result in one request, as the attempt holding the job with
   * `lockToken`; `conflict` when a different result is already stored (nothing was written then).
   * @throws FlowfleetError WORKER_JOB_LOST when the coordinator says this attempt no longer holds
   *   the job (API_RESULT_NOT_HOLDER: its lock lapsed and the job moved on; not retried)
   * @throws FlowfleetError WORKER_RESULT_UPLOAD_FAILED (`details.code`: the last failure's),
   *   CLIENT_ABORTED
   */
  async putResults(
    jobId: string,
    lockToken: string,
    files: ResultFiles,
    signal?: AbortSignal,
  ): Promise<ResultUploadOutcome> {
    try {
      const stored = await this.#client.uploadResults(jobId, lockToken, files, {
        retry: this.#uploadRetry,
        ...(signal === undefined ? {} : { signal }),
      });
      return stored.status;
    } catch (error) {
      if (isFlowfleetError(error, 'API_RESULT_CONFLICT')) return 'conflict';
      if (isFlowfleetError(error, 'API_RESULT_NOT_HOLDER')) {
        // The lock lapsed (a partition longer than it) and the job moved on: this attempt's
        // outcome is dropped, as its completion would have been.
        throw new FlowfleetError(
          'WORKER_JOB_LOST',
          `job ${jobId}: the coordinator refused the result, this attempt no longer holds the job`,
          { details: { jobId, code: error.code }, cause: error },
        );
      }
      if (!isFlowfleetError(error) || error.code === 'CLIENT_ABORTED') throw error;
      throw new FlowfleetError(
        'WORKER_RESULT_UPLOAD_FAILED',
        `results of job ${jobId}: ${error.message}`,
        { details: { jobId, code: error.code }, cause: error },
      );
    }
  }

  /**
   * The summary stored with job `jobId`'s result, or undefined when none is (retried like an
   * upload).
   * @throws FlowfleetError WORKER_RESULT_UPLOAD_FAILED (`details.code`: the last failure's),
   *   CLIENT_ABORTED
   */
  async storedSummary(jobId: string, signal?: AbortSignal): Promise<RolloutSummary | undefined> {
    try {
      return await this.#client.storedSummary(jobId, {
        retry: this.#uploadRetry,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (isFlowfleetError(error, 'API_RESULT_NOT_FOUND')) return undefined;
      if (!isFlowfleetError(error) || error.code === 'CLIENT_ABORTED') throw error;
      throw new FlowfleetError(
        'WORKER_RESULT_UPLOAD_FAILED',
        `stored summary of job ${jobId}: ${error.message}`,
        { details: { jobId, code: error.code }, cause: error },
      );
    }
  }

  /** Closes the connections to the coordinator. Idempotent. */
  close(): Promise<void> {
    return this.#client.close();
  }
}
