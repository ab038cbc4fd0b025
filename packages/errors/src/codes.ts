/** What the error table says about one code. */
export interface ErrorCodeInfo {
  /** The package or app that raises it. */
  readonly source: string;
  /** HTTP status when the code crosses the API edge. */
  readonly httpStatus: number;
  /** One line: when it is raised. Kept identical to the row in docs/errors.md. */
  readonly summary: string;
}

/**
 * Every error code flowfleet raises. A code is SCREAMING_SNAKE with a package prefix and is never
 * reused once retired; docs/errors.md carries one row per entry (a test keeps the two in sync).
 */
export const ERROR_CODES = {
  INTERNAL_ERROR: {
    source: 'any',
    httpStatus: 500,
    summary: 'An unexpected defect; the message is withheld from clients and the stack is logged.',
  },
  REG_KEY_ARITY: {
    source: 'registry',
    httpStatus: 500,
    summary: 'A registry key has the wrong number of fields for its registry.',
  },
  REG_INVALID_KEY: {
    source: 'registry',
    httpStatus: 500,
    summary: 'A registry key field is empty or not a string.',
  },
  REG_DUPLICATE_CELL: {
    source: 'registry',
    httpStatus: 500,
    summary: 'A cell is registered under a key that already holds one.',
  },
  REG_INVALID_WORKSPACE: {
    source: 'registry',
    httpStatus: 500,
    summary: "A kernel's declared workspaceBytes is not a non-negative integer.",
  },
  PLAT_UNKNOWN_ARCH: {
    source: 'platform',
    httpStatus: 400,
    summary:
      "An arch string belongs to no known family (x86-64 levels, aarch64, smXY, a webgpu adapter's arch).",
  },
  PLAT_NO_KERNEL: {
    source: 'platform',
    httpStatus: 500,
    summary:
      'No registered and available kernel for an op along the fallback chain; lists every rejected candidate.',
  },
  PLAT_NO_COMPONENT: {
    source: 'platform',
    httpStatus: 500,
    summary: 'No registered component builder and no card factory for a component.',
  },
  PLAT_PARITY_SHAPE: {
    source: 'platform',
    httpStatus: 500,
    summary: 'A parity check compares arrays of different lengths or tap sets.',
  },
  PLAT_INVALID_OVERRIDE: {
    source: 'platform',
    httpStatus: 500,
    summary: "The test-only FLOWFLEET_PLATFORM_OVERRIDE is not 'device:arch' with a known device.",
  },
  PLAT_INVALID_DEVICE: {
    source: 'platform',
    httpStatus: 500,
    summary: 'FLOWFLEET_DEVICE is not one of auto, cpu, cuda, webgpu.',
  },
  PLAT_DEVICE_UNAVAILABLE: {
    source: 'platform',
    httpStatus: 500,
    summary:
      'FLOWFLEET_DEVICE names a device that is not here (no CUDA device or provider library, no WebGPU adapter); carries the reason.',
  },
  PLAT_COMPUTE_THREAD_EXITED: {
    source: 'platform',
    httpStatus: 503,
    summary:
      'A compute pool thread failed to start or exited with calls in flight; those calls are rejected and the pool starts a replacement.',
  },
  PLAT_COMPUTE_POOL_CLOSED: {
    source: 'platform',
    httpStatus: 503,
    summary:
      'A call reached a compute pool that is closed or closing; calls in flight are rejected.',
  },
  PLAT_COMPUTE_POOL_CLOSE_FAILED: {
    source: 'platform',
    httpStatus: 500,
    summary: 'One or more threads of a compute pool failed to stop on close; every step still ran.',
  },
  PLAT_COMPUTE_HANDLER_FAILED: {
    source: 'platform',
    httpStatus: 500,
    summary:
      'A compute handler module could not be loaded into a thread (import failed, no createComputeHandler export, another module under its id), or a call named a handler the thread has not loaded.',
  },
  PLAT_COMPUTE_UNKNOWN_WEIGHTS: {
    source: 'platform',
    httpStatus: 500,
    summary:
      'A compute handler asked its thread for a weight set that was never uploaded there or was released.',
  },
  PROTO_INVALID_REQUEST: {
    source: 'protocol',
    httpStatus: 400,
    summary:
      'A rollout request fails its schema or a limit (steps, latent size, group size, prompt length); details.issues lists each path and problem.',
  },
  PROTO_INVALID_MANIFEST: {
    source: 'protocol',
    httpStatus: 400,
    summary: 'A worker manifest fails its schema; details.issues lists each path and problem.',
  },
  PROTO_INVALID_JOB: {
    source: 'protocol',
    httpStatus: 500,
    summary:
      'A job payload, job status or rollout summary read back from Redis or the blob store fails its schema.',
  },
  PROTO_INVALID_LANE: {
    source: 'protocol',
    httpStatus: 500,
    summary:
      'A lane spec fails its schema, or its name is not the hash of its requirements, or a lane name or hash is malformed.',
  },
  PROTO_INVALID_KEY: {
    source: 'protocol',
    httpStatus: 400,
    summary:
      'A Redis key prefix or key part is empty, too long, or contains a character outside [A-Za-z0-9._-].',
  },
  PROTO_INVALID_LIMITS: {
    source: 'protocol',
    httpStatus: 500,
    summary: 'A limits override is not a positive safe integer (configuration error at boot).',
  },
  API_INVALID_BODY: {
    source: 'coordinator',
    httpStatus: 400,
    summary: 'An HTTP request body fails its schema; details.issues lists each path and problem.',
  },
  API_INVALID_PARAMS: {
    source: 'coordinator',
    httpStatus: 400,
    summary:
      'A path parameter or query parameter is malformed (job id, sha256, component, limit); details.issues lists each.',
  },
  API_INVALID_JSON: {
    source: 'coordinator',
    httpStatus: 400,
    summary: 'A request body is not valid JSON, or a JSON route got an empty body.',
  },
  API_BAD_REQUEST: {
    source: 'coordinator',
    httpStatus: 400,
    summary:
      'The HTTP request is malformed in a way no more specific code covers (e.g. an unparseable Content-Length); details.reason names it.',
  },
  API_UNAUTHORIZED: {
    source: 'coordinator',
    httpStatus: 401,
    summary: 'No bearer token, or a token that matches no role.',
  },
  API_FORBIDDEN: {
    source: 'coordinator',
    httpStatus: 403,
    summary: "The bearer token's role may not call this route (e.g. a viewer token on a mutation).",
  },
  API_ROUTE_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary: 'No route matches the method and path.',
  },
  API_JOB_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary: 'No rollout job has this id (never enqueued, or past its retention).',
  },
  API_RESULT_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary: 'The rollout has no stored result yet (not completed, or failed).',
  },
  API_BLOB_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary: 'No blob with this sha256 is stored; upload it with PUT /v1/blobs first.',
  },
  API_DEVICE_CLASS_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary:
      'GET /v1/scaling?deviceClass= names a well-formed class that is not known: no live worker, no remembered manifest and not in FLOWFLEET_SCALING_CLASSES; details.known lists the known classes.',
  },
  API_LANE_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 404,
    summary:
      'GET /v1/fleet?lane= names a well-formed lane that is not recorded (lanes are recorded by their first rollout); GET /v1/lanes lists them.',
  },
  API_SYNC_BASE_UNKNOWN: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      "A LoRA sync's `lora.base` is not a synced version of the component below the new one; nothing was recorded.",
  },
  API_NO_CAPACITY: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      "No live worker satisfies the job's requirements; nothing was enqueued. details.workers gives each worker's reasons.",
  },
  API_STALE_VERSION: {
    source: 'coordinator',
    httpStatus: 409,
    summary: "A weight sync's version is not greater than the component's current version.",
  },
  API_WEIGHT_VERSION_UNAVAILABLE: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      'A rollout requires a weight version that was never synced or that no live worker could load.',
  },
  API_IDEMPOTENCY_CONFLICT: {
    source: 'coordinator',
    httpStatus: 422,
    summary:
      'The Idempotency-Key was first sent with a different rollout request (422, as the IETF httpapi Idempotency-Key draft asks); a key names one request, and nothing was enqueued.',
  },
  API_RESULT_CONFLICT: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      'The job already has a result.safetensors with different bytes; results are written once and nothing was written.',
  },
  API_RESULT_NOT_HOLDER: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      "A result upload does not come from the attempt that holds the job: its job-lock header is missing or is not the job's current lock (the job is queued, finished, or another attempt took it over). Nothing was written.",
  },
  API_RESULT_MISMATCH: {
    source: 'coordinator',
    httpStatus: 422,
    summary:
      'An uploaded result does not describe the request of the job it is stored under (model, prompt, seeds, steps, sampler, guidance, schedule or weights differ); details.mismatches names each field. Nothing was written.',
  },
  API_JOB_NOT_CANCELLABLE: {
    source: 'coordinator',
    httpStatus: 409,
    summary:
      'DELETE /v1/rollouts/:id on a job that is no longer queued: a running job finishes (its result is stored as usual) and a finished one stays; details.status says which.',
  },
  API_URL_TOO_LONG: {
    source: 'coordinator',
    httpStatus: 414,
    summary:
      'A path parameter is longer than the router accepts (no id, sha256 or name the API issues is this long); nothing was read.',
  },
  API_INVALID_UTF8: {
    source: 'coordinator',
    httpStatus: 400,
    summary:
      'A JSON body is not valid UTF-8 (a prompt would otherwise be stored with U+FFFD in place of its bytes); nothing was changed.',
  },
  API_BODY_TOO_LARGE: {
    source: 'coordinator',
    httpStatus: 413,
    summary: 'A JSON body exceeds the maxBodyBytes limit.',
  },
  API_BLOB_TOO_LARGE: {
    source: 'coordinator',
    httpStatus: 413,
    summary: 'An upload (blob or result file) exceeds its size limit; nothing is kept.',
  },
  API_BLOB_STORE_FULL: {
    source: 'coordinator',
    httpStatus: 507,
    summary:
      'The blob store has no space left (ENOSPC, EDQUOT); nothing of the upload was kept. Retry after Retry-After seconds (workers do, within their upload retry bound) or free space / lower the retention.',
  },
  API_RANGE_NOT_SATISFIABLE: {
    source: 'coordinator',
    httpStatus: 416,
    summary:
      "A blob download asked for a byte range that is malformed or not inside the blob (ranges are `bytes=first-last`, one per request), or asked a worker's peer server (which serves ranges only) for no range.",
  },
  API_UNSUPPORTED_MEDIA_TYPE: {
    source: 'coordinator',
    httpStatus: 415,
    summary:
      'The Content-Type is not accepted by the route (JSON routes: application/json; uploads: application/octet-stream).',
  },
  API_REDIS_UNAVAILABLE: {
    source: 'coordinator',
    httpStatus: 503,
    summary:
      'Redis did not answer while the request was served (down, restarting, unreachable); retry after Retry-After seconds. Only a connection cut mid-command leaves a mutation possibly applied.',
  },
  API_EMBEDS_NOT_FOUND: {
    source: 'coordinator',
    httpStatus: 422,
    summary:
      'A rollout names a text embedding (`promptEmbeds`, `negativePromptEmbeds`) whose blob is not in the store; upload it first (`PUT /v1/blobs`). Nothing was enqueued.',
  },
  API_EMBEDS_INVALID: {
    source: 'coordinator',
    httpStatus: 422,
    summary:
      "A rollout names a text embedding whose blob is not one safetensors tensor [L, dim] of F32, BF16 or F16 with 1 ≤ L ≤ the card's text length and dim its embedding width; details name the field and the rule. Nothing was enqueued.",
  },
  API_BLOB_CORRUPT: {
    source: 'coordinator',
    httpStatus: 500,
    summary:
      'A stored blob no longer hashes to its name (its file changed on disk), so it cannot be vouched for; upload it again.',
  },
  COORD_ENV_INVALID: {
    source: 'coordinator',
    httpStatus: 500,
    summary:
      'The coordinator environment is invalid (missing REDIS_URL or tokens, bad port); the message lists each variable. Exit code 2.',
  },
  COORD_REDIS_EVICTION_POLICY: {
    source: 'coordinator',
    httpStatus: 500,
    summary:
      'Redis maxmemory-policy is not noeviction; the coordinator refuses to start. Fix: CONFIG SET maxmemory-policy noeviction, or the redis.conf line.',
  },
  COORD_REDIS_UNAVAILABLE: {
    source: 'coordinator',
    httpStatus: 503,
    summary: 'Redis cannot be reached (at start-up, or by the health check).',
  },
  COORD_RESPONSE_INVALID: {
    source: 'coordinator',
    httpStatus: 500,
    summary:
      'A defect: an answer failed its own route schema; it was not sent, and the mismatch (route, issues) is logged.',
  },
  CLIENT_INVALID_OPTIONS: {
    source: 'client',
    httpStatus: 400,
    summary:
      'A client option or argument is malformed (base URL, timeout, retry, poll interval, minWorkers, id); nothing was sent.',
  },
  CLIENT_UNREACHABLE: {
    source: 'client',
    httpStatus: 503,
    summary:
      'The coordinator could not be reached (connection refused, reset, DNS); the cause carries the network error.',
  },
  CLIENT_TIMEOUT: {
    source: 'client',
    httpStatus: 504,
    summary:
      'A bound passed: one request (timeoutMs), waitFor or waitForSync; details say what was awaited and the last state seen.',
  },
  CLIENT_ABORTED: {
    source: 'client',
    httpStatus: 499,
    summary: "The caller's AbortSignal fired; the cause is the signal's reason.",
  },
  CLIENT_RESPONSE_TOO_LARGE: {
    source: 'client',
    httpStatus: 502,
    summary:
      'An answer passed the size the call allows (maxResponseBytes: by Content-Length up front, or as it arrived); it is not retried.',
  },
  CLIENT_HTTP_ERROR: {
    source: 'client',
    httpStatus: 502,
    summary:
      'The coordinator answered an error status without a known error envelope; details carry the status and the body (or the unknown envelope).',
  },
  CLIENT_BAD_RESPONSE: {
    source: 'client',
    httpStatus: 502,
    summary:
      'A coordinator response is not JSON or fails its schema; details.issues lists each path and problem.',
  },
  CLIENT_BLOB_MISMATCH: {
    source: 'client',
    httpStatus: 502,
    summary:
      'The coordinator answered another sha256 or size than the bytes the client uploaded or downloaded.',
  },

  CLIENT_JOB_FAILED: {
    source: 'client',
    httpStatus: 500,
    summary:
      "An awaited rollout job failed; details.error is the server's error envelope, and the cause a FlowfleetError with its code when known.",
  },
  CLIENT_SYNC_FAILED: {
    source: 'client',
    httpStatus: 500,
    summary:
      'An awaited weight version failed (no worker could load it) or was superseded before any worker loaded it; details carry acks and reasons.',
  },
  CLIENT_UNKNOWN_VERSION: {
    source: 'client',
    httpStatus: 404,
    summary: 'waitForSync names a weight version that was never synced for the component.',
  },
  REDIS_URL_INVALID: {
    source: 'redis',
    httpStatus: 500,
    summary:
      'REDIS_URL cannot be used in the chosen FLOWFLEET_REDIS_MODE (not a redis:// or rediss:// URL, no host, or in sentinel mode no sentinel list or master name); nothing connects.',
  },
  REDIS_MODE_MISMATCH: {
    source: 'redis',
    httpStatus: 500,
    summary:
      'FLOWFLEET_REDIS_MODE does not match the Redis it reached (standalone on a cluster node, or cluster without masters ready); nothing starts.',
  },
  REDIS_NOT_REPLICATED: {
    source: 'redis',
    httpStatus: 503,
    summary:
      'FLOWFLEET_REDIS_WAIT_REPLICAS > 0 and fewer replicas acknowledged a write within FLOWFLEET_REDIS_WAIT_TIMEOUT_MS (or the connection failed over meanwhile): the write is on the master but may not survive a failover. An enqueue answers 503 and is safe to retry with the same Idempotency-Key.',
  },
  CLI_USAGE: {
    source: 'cli',
    httpStatus: 400,
    summary:
      'A flowfleet command was given bad arguments (unknown flag, malformed number or list). Exit code 2.',
  },
  CLI_FILE_UNREADABLE: {
    source: 'cli',
    httpStatus: 400,
    summary: 'A file named on the flowfleet command line cannot be read.',
  },
  CLI_REDIS_UNAVAILABLE: {
    source: 'cli',
    httpStatus: 500,
    summary:
      'flowfleet up found no Redis: REDIS_URL unset, no redis-server on PATH and no Docker engine; the message says how to install one.',
  },
  CLI_CHILD_FAILED: {
    source: 'cli',
    httpStatus: 500,
    summary:
      'A local-fleet child (redis-server, coordinator or worker) failed to spawn or exited unexpectedly; the message carries its last output.',
  },
  CLI_START_TIMEOUT: {
    source: 'cli',
    httpStatus: 504,
    summary:
      'The local fleet did not become ready (coordinator health, live workers) before the start-up deadline.',
  },
  CLI_DEMO_CHECK_FAILED: {
    source: 'cli',
    httpStatus: 500,
    summary:
      'flowfleet demo saw the fleet break a promise it demonstrates (e.g. a rollout ran on the wrong weight version).',
  },
  CLI_PYTHON_MISSING: {
    source: 'cli',
    httpStatus: 500,
    summary:
      'flowfleet train found no executable Python (the .venv of npm run setup:python, FLOWFLEET_PYTHON or --python); checked before anything starts.',
  },
  CLI_TRAINER_FAILED: {
    source: 'cli',
    httpStatus: 500,
    summary:
      'The trainer flowfleet train ran (examples/flowgrpo/train.py) exited non-zero; its own error line is printed above.',
  },
  WORKER_ENV_INVALID: {
    source: 'worker',
    httpStatus: 500,
    summary:
      'The worker environment is invalid (missing REDIS_URL or coordinator URL, bad number); the message lists each variable. Exit code 2.',
  },
  WORKER_REDIS_UNAVAILABLE: {
    source: 'worker',
    httpStatus: 503,
    summary: 'The worker cannot reach Redis at start-up.',
  },
  WORKER_BACKEND_UNAVAILABLE: {
    source: 'worker',
    httpStatus: 500,
    summary:
      'FLOWFLEET_BACKEND names a backend this host cannot run (e.g. ort-cpu without a working onnxruntime-node); the worker does not start.',
  },
  WORKER_INVALID_OPTION: {
    source: 'worker',
    httpStatus: 500,
    summary:
      'A worker option is malformed (e.g. a FLOWFLEET_EXTRA_KERNELS entry, lock settings that cannot renew a lock in time).',
  },
  WORKER_JOB_UNSERVABLE: {
    source: 'worker',
    httpStatus: 422,
    summary:
      'A dequeued job sits in another lane than its payload names, or its requirements are not satisfied by this worker; it fails without retry.',
  },
  WORKER_WEIGHTS_UNAVAILABLE: {
    source: 'worker',
    httpStatus: 503,
    summary:
      'The worker cannot reach the weight version a job requires (never synced, refused as a bad blob, or an exact version older than the one it holds); the job is retried per its attempts. The coordinator refuses such a job at enqueue when it can tell (API_WEIGHT_VERSION_UNAVAILABLE).',
  },
  WORKER_EMBEDS_INVALID: {
    source: 'worker',
    httpStatus: 422,
    summary:
      "A job's text embedding cannot be used: its values are not all finite, or its blob no longer matches the header the edge checked; the job fails (no retry helps) and nothing else changes: no result, no cache entry.",
  },
  WORKER_BLOB_REFUSED: {
    source: 'worker',
    httpStatus: 422,
    summary:
      'A synced weight version failed verification (its record does not parse — e.g. one from before manifests —, a manifest or tensor digest, the safetensors layout); the worker stays on its old version and acks refused.',
  },
  WORKER_WEIGHTS_NOT_FINITE: {
    source: 'worker',
    httpStatus: 422,
    summary:
      'A synced weight version holds a NaN or ±Inf (a checkpoint or adapter tensor, checked in the pass that verifies its digest, or a LoRA merge that overflows float32); the worker stays on its old version and acks refused with this code.',
  },
  WORKER_PEER_RANGE_UNAVAILABLE: {
    source: 'worker',
    httpStatus: 404,
    summary:
      "A worker's peer server does not hold (and is not fetching) the verified bytes of the requested blob range, or they did not arrive within its wait bound; the asking worker falls back to its next source.",
  },
  WORKER_PEER_CHUNK_INVALID: {
    source: 'worker',
    httpStatus: 502,
    summary:
      'A peer served bytes of a weights range that fail the manifest digest; they are never adopted and the worker fetches that range from its next source (the coordinator last); named in the ack fallbacks.',
  },
  WORKER_RESULT_UPLOAD_FAILED: {
    source: 'worker',
    httpStatus: 503,
    summary:
      "The coordinator did not accept the job's result upload within the upload retry bound (unreachable, 5xx, rejected); the job is retried per its attempts.",
  },
  WORKER_RESULT_CONFLICT: {
    source: 'worker',
    httpStatus: 409,
    summary:
      "The job already holds a different result.safetensors from an earlier attempt (another backend or weight version ran it). The stored result stands: the job completes with the earlier attempt's summary (logged at warn), or, when that attempt stored no summary, fails without retry. A worker that lost the job meanwhile logs it, then WORKER_JOB_LOST.",
  },
  WORKER_JOB_LOST: {
    source: 'worker',
    httpStatus: 409,
    summary:
      "The worker no longer held a job when it uploaded its result or settled it: its lock lapsed (a partition or a stall longer than the lock) and the job moved on to another attempt; this worker's outcome is dropped (the coordinator refuses its result, API_RESULT_NOT_HOLDER) and it goes on serving.",
  },
  NUM_INVALID_ARGUMENT: {
    source: 'numerics',
    httpStatus: 400,
    summary:
      'A numerics function got an argument outside its domain (seed range, length mismatch, sigma range).',
  },
  NUM_VECTORS_MALFORMED: {
    source: 'numerics',
    httpStatus: 400,
    summary:
      'A golden-vectors file is not valid JSON or does not have the golden format; names the bad field.',
  },
  FMT_SAFETENSORS_INVALID: {
    source: 'formats',
    httpStatus: 400,
    summary:
      'A safetensors file breaks the format (header length, UTF-8 JSON object, duplicate or empty name, `__metadata__` strings, dtype, shape, offsets, gap, overlap, trailing bytes, BOOL byte), or the writer is given a tensor that does not match its dtype and shape; `details.reason` names the rule.',
  },
  FMT_ROLLOUT_INVALID: {
    source: 'formats',
    httpStatus: 400,
    summary:
      'A RolloutFile v1 record, file or summary breaks docs/formats/rollout-file-v1.md (format, version, metadata schema, tensor set, dtype, shape, non-finite value, seed range, summary lengths); `details.reason` names the rule.',
  },
  FMT_INVALID_ARGUMENT: {
    source: 'formats',
    httpStatus: 400,
    summary: 'A RolloutFile accessor was given a step or sample index outside the file.',
  },
  FMT_FILE_IO: {
    source: 'formats',
    httpStatus: 500,
    summary: 'A safetensors file could not be opened, sized or read.',
  },
  FMT_CHECKPOINT_INVALID: {
    source: 'formats',
    httpStatus: 400,
    summary:
      'A checkpoint is not one safetensors file, a directory with one, or shards named by one `*.safetensors.index.json` that agrees with their headers; or two shards hold the same tensor. `details.reason` names the rule, `details.problems` lists each disagreement.',
  },
  FMT_ONNX_MALFORMED: {
    source: 'formats',
    httpStatus: 400,
    summary: 'Bytes read back as an ONNX model are not a well-formed protobuf message.',
  },
  MODEL_CONFIG_INVALID: {
    source: 'models',
    httpStatus: 400,
    summary:
      'A model config breaks a structural constraint (non-positive size, dim not divisible by heads, odd head dim).',
  },
  MODEL_UNKNOWN_CARD: {
    source: 'models',
    httpStatus: 404,
    summary: 'No model card is registered under the requested id; lists the known ids.',
  },
  MODEL_DUPLICATE_CARD: {
    source: 'models',
    httpStatus: 500,
    summary: 'A card registry was given two model cards with the same id.',
  },
  MODEL_INVALID_REQUEST: {
    source: 'models',
    httpStatus: 400,
    summary:
      "A rollout request breaks its model card's rules (seeds, sampler, schedule, latent shape vs patch, guidance, a noise level the SDE numerics cannot survive); names the field.",
  },
  MODEL_WEIGHTS_MISMATCH: {
    source: 'models',
    httpStatus: 400,
    summary:
      "A weight set or checkpoint does not match the component after the card's key maps: one error listing every missing, unexpected (unknown or mapped twice) and wrong-shape or wrong-dtype tensor.",
  },
  MODEL_LORA_INVALID: {
    source: 'models',
    httpStatus: 400,
    summary:
      "A LoRA adapter does not fit the component: its config is unsupported (DoRA, fan_in_fan_out, a bias) or malformed, its tensors do not pair up or do not match the layer's shape or rank, or a layer's alpha (config or `.alpha` tensor) is not finite, is 0 (a no-op) or gives a scale beyond ±1024; lists every problem.",
  },
  MODEL_LORA_UNBOUND: {
    source: 'models',
    httpStatus: 422,
    summary:
      'A LoRA adapter binds no layer of the component, or fewer than `lora.expectLayers`: the silent no-op is refused and nothing changes; details give boundLayers and the adapter modules left unbound.',
  },
  MODEL_WEIGHTS_IO: {
    source: 'models',
    httpStatus: 500,
    summary: 'A weights file could not be read or written.',
  },
  MODEL_INPUT_INVALID: {
    source: 'models',
    httpStatus: 400,
    summary: 'A forward input is missing or has the wrong dtype or dims for the config.',
  },
  MODEL_ONNX_OPTIONS_INVALID: {
    source: 'models',
    httpStatus: 400,
    summary:
      'ONNX export options are invalid: unknown component, form or flag, a captured graph without weights or fixed dims, or over the 2 GB protobuf limit.',
  },
  MODEL_NO_COMPUTE_POOL: {
    source: 'models',
    httpStatus: 500,
    summary:
      "A TS reference component was built on a platform without a compute pool (createPlatform({pool})) and not placed on the caller's thread.",
  },
  MODEL_NO_REFERENCE_FORWARD: {
    source: 'models',
    httpStatus: 500,
    summary:
      'A card component has no TS reference forward (its factory, the last rung) and no backend could build it: it runs on ONNX Runtime only.',
  },
  MODEL_COMPONENT_DISPOSED: {
    source: 'models',
    httpStatus: 500,
    summary: 'A TS reference component (or one of its captured forwards) was used after dispose().',
  },
  BACK_ORT_LOAD_FAILED: {
    source: 'backends',
    httpStatus: 500,
    summary:
      'onnxruntime-node could not be loaded (missing package or native binding); carries the loader message.',
  },
  BACK_ORT_SESSION_FAILED: {
    source: 'backends',
    httpStatus: 500,
    summary:
      'ONNX Runtime rejected a model or its session options when creating a session; carries the runtime message.',
  },
  BACK_ORT_RUN_FAILED: {
    source: 'backends',
    httpStatus: 500,
    summary:
      'An ONNX Runtime forward failed (bad feed names, dims or dtypes, or a runtime error); carries the runtime message.',
  },
  BACK_ORT_UNKNOWN_SESSION: {
    source: 'backends',
    httpStatus: 500,
    summary:
      'A forward names an ONNX Runtime session that was never created, was released, or died with its worker.',
  },
  BACK_ORT_NO_ONNX_ARTIFACT: {
    source: 'backends',
    httpStatus: 500,
    summary: 'A component spec handed to an ort-* builder has no ONNX artifacts (`spec.onnx`).',
  },
  BACK_ORT_UNSUPPORTED_DTYPE: {
    source: 'backends',
    httpStatus: 500,
    summary:
      'A tensor crossing the ONNX Runtime boundary has an element type other than float32, int32 or int64.',
  },
  BACK_PROVIDER_UNAVAILABLE: {
    source: 'backends',
    httpStatus: 503,
    summary:
      "An ONNX Runtime execution provider (cuda, webgpu) is not usable here; carries the probe's real reason.",
  },
  RT_UNKNOWN_COMPONENT: {
    source: 'runtime',
    httpStatus: 400,
    summary:
      "A component id is not on the model card of this instance; lists the card's components.",
  },
  RT_WEIGHTS_MISSING: {
    source: 'runtime',
    httpStatus: 400,
    summary:
      'A ModelInstance was created without an initial weight version for one of its components.',
  },
  RT_WEIGHTS_VERSION_EXISTS: {
    source: 'runtime',
    httpStatus: 409,
    summary:
      'setWeightsVersion names a version the component already holds (versions are never reused).',
  },
  RT_INSTANCE_CLOSED: {
    source: 'runtime',
    httpStatus: 503,
    summary: 'A ModelInstance (or its GraphCapturer) was used after close().',
  },
  RT_UNKNOWN_LOOP: {
    source: 'runtime',
    httpStatus: 400,
    summary: 'A model card declares no loop for the runtime to run a rollout with.',
  },
  RT_GRAPH_KEY_COLLISION: {
    source: 'runtime',
    httpStatus: 500,
    summary:
      'Two work plans share a graph key but declare different workspace sizes (a keying bug).',
  },
  RT_WORKSPACE_OVERFLOW: {
    source: 'runtime',
    httpStatus: 500,
    summary: 'A graph function asked its static workspace for more bytes than the plan declared.',
  },
  RT_GRAPH_BIND_MISMATCH: {
    source: 'runtime',
    httpStatus: 500,
    summary: "A replay's inputs differ from the captured graph's in names, dims or dtype.",
  },
  RT_INTERCEPTOR_CONFLICT: {
    source: 'runtime',
    httpStatus: 400,
    summary: 'More than one distribution-altering interceptor was installed on one rollout.',
  },
  RT_NON_FINITE: {
    source: 'runtime',
    httpStatus: 500,
    summary:
      "The NaN watch saw a NaN or infinity in a step's output; names the step, tensor and index.",
  },
  RT_CANCELLED: {
    source: 'runtime',
    httpStatus: 499,
    summary: 'A rollout was cancelled through its AbortSignal; it stopped at a step boundary.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** Every error code, as a closed union. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Codes that were raised once and are not any more. They stay listed so that no new code takes
 * one of their names (a test holds ERROR_CODES apart from them); docs/errors.md lists them too.
 */
export const RETIRED_ERROR_CODES: readonly string[] = Object.freeze([
  'BACK_ORT_UNKNOWN_WEIGHTS',
  'BACK_ORT_WORKER_EXITED',
  'BACK_POOL_CLOSED',
  'BACK_POOL_CLOSE_FAILED',
  'CLIENT_RESULT_INVALID',
  'MODEL_ONNX_MALFORMED',
  'MODEL_REFERENCE_POOL_CLOSED',
  'MODEL_REFERENCE_WORKER_EXITED',
  'MODEL_SAFETENSORS_INVALID',
  'PROTO_INVALID_SYNC',
  'RT_INVALID_REQUEST',
  'RT_RESULT_INVALID',
  'WORKER_BLOB_FETCH_FAILED',
  'WORKER_PEER_BAD_REQUEST',
  'WORKER_PEER_UNAUTHORIZED',
]);
