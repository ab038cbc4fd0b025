import { hostname } from 'node:os';
import { FlowfleetError } from '@flowfleet/errors';
import { ComputePool } from '@flowfleet/platform';
import { DEFAULT_LIMITS, FleetLimits, type WorkerManifest } from '@flowfleet/protocol';
import type { ModelInstance } from '@flowfleet/runtime';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { setUpBackends } from './backend-setup.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { CoordinatorClient } from './coordinator-client.js';
import { FleetSubscriber } from './fleet-subscriber.js';
import { workerKeys, type WorkerKeys } from './keys.js';
import { LaneServer } from './lane-server.js';
import { LaneWatcher } from './lane-watcher.js';
import { buildManifest } from './manifest.js';
import { ModelHost } from './model-host.js';
import { quitRedis } from './quit-redis.js';
import { RolloutJobRunner } from './rollout-job-runner.js';
import { WeightSyncer } from './weight-syncer.js';
import {
  resolveWorkerOptions,
  type ResolvedWorkerOptions,
  type WorkerOptions,
} from './worker-options.js';
import { WorkerRegistration } from './worker-registration.js';
import type { FlowfleetWorker, WorkerStats } from './flowfleet-worker.js';

/**
 * Builds a worker without any I/O: nothing connects until `start()`.
 * @throws FlowfleetError WORKER_INVALID_OPTION, PROTO_INVALID_KEY (prefix or worker id)
 */
export function createWorker(options: WorkerOptions): FlowfleetWorker {
  const resolved = resolveWorkerOptions(options);
  const keys = workerKeys(resolved.prefix);
  keys.worker(resolved.workerId); // checks the id is a valid key part
  const logger = (options.logger ?? pino({ level: 'silent' })).child({
    workerId: resolved.workerId,
  });
  return new FleetWorker(resolved, keys, logger);
}

class FleetWorker implements FlowfleetWorker {
  readonly workerId: string;
  readonly #options: ResolvedWorkerOptions;
  readonly #keys: WorkerKeys;
  readonly #logger: Logger;
  readonly #gate: ConcurrencyGate;
  readonly #redis: Redis;
  readonly #subscriberConnection: Redis;
  readonly #blockingConnection: Redis;
  #pool: ComputePool | undefined;
  #host: ModelHost | undefined;
  #manifest: WorkerManifest | undefined;
  #syncer: WeightSyncer | undefined;
  #coordinator: CoordinatorClient | undefined;
  #registration: WorkerRegistration | undefined;
  #watcher: LaneWatcher | undefined;
  #lanes: LaneServer | undefined;
  #rescanTimer: NodeJS.Timeout | undefined;
  #starting: Promise<void> | undefined;
  #closeRequested = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedWorkerOptions, keys: WorkerKeys, logger: Logger) {
    this.workerId = options.workerId;
    this.#options = options;
    this.#keys = keys;
    this.#logger = logger;
    this.#gate = new ConcurrencyGate(options.concurrency);
    const connection = (role: string) => {
      const redis = new Redis(options.redisUrl, {
        lazyConnect: true,
        // BullMQ needs it on a connection it is handed; it also keeps commands queued (not
        // failed) across a Redis restart.
        maxRetriesPerRequest: null,
        connectionName: `flowfleet-worker:${options.workerId}:${role}`,
      });
      redis.on('error', (error) => logger.debug({ err: error, role }, 'redis connection error'));
      return redis;
    };
    this.#redis = connection('main');
    this.#subscriberConnection = connection('subscriber');
    this.#blockingConnection = connection('events');
  }

  async start(): Promise<void> {
    if (this.#starting !== undefined || this.#closeRequested) {
      throw new Error('start() runs once: build a new worker');
    }
    this.#starting = this.#startUp();
    try {
      await this.#starting;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** Stops a start-up that a close() overtook, before it builds anything more. */
  #checkNotClosed(): void {
    if (this.#closeRequested) throw new Error('the worker was closed during start-up');
  }

  async #startUp(): Promise<void> {
    const options = this.#options;
    const logger = this.#logger;
    try {
      await Promise.all([
        this.#redis.connect(),
        this.#subscriberConnection.connect(),
        this.#blockingConnection.connect(),
      ]);
    } catch (cause) {
      throw new FlowfleetError('WORKER_REDIS_UNAVAILABLE', 'cannot reach Redis', { cause });
    }
    this.#checkNotClosed();
    // The worker's one compute pool: every component it builds runs its forwards there.
    this.#pool = await ComputePool.create({ threads: options.ortThreads });
    this.#checkNotClosed();
    const platform = await setUpBackends({
      backend: options.backend,
      ...(options.platformFacts === undefined ? {} : { facts: options.platformFacts }),
      extraKernels: options.extraKernels,
      pool: this.#pool,
      componentKinds: options.cards.componentKinds(),
      ortIntraOpThreads: options.ortIntraOpThreads,
      logger,
    });
    this.#checkNotClosed();
    const host = await ModelHost.create(
      options.models,
      platform.platform,
      options.workerId,
      options.cards,
    );
    this.#host = host;
    this.#checkNotClosed();
    // Read once, after the provider probe: availability no longer changes in this process.
    const kernelRows = platform.kernels.manifest();
    const componentRows = platform.components.manifest();
    const startedAt = new Date().toISOString();
    const rebuildManifest = (): WorkerManifest =>
      (this.#manifest = buildManifest({
        workerId: options.workerId,
        host: hostname(),
        pid: process.pid,
        facts: platform.facts,
        kernels: kernelRows,
        components: componentRows,
        models: host.models,
        concurrency: options.concurrency,
        weights: host.held(),
        startedAt,
      }));
    rebuildManifest();
    const client = new CoordinatorClient({
      baseUrl: options.coordinatorUrl,
      token: options.workerToken,
      uploadRetryMs: options.uploadRetryMs,
      logger: logger.child({ part: 'coordinator' }),
    });
    this.#coordinator = client;
    const syncer = new WeightSyncer({
      redis: this.#redis,
      keys: this.#keys,
      workerId: options.workerId,
      target: host,
      blobs: client,
      limits: DEFAULT_LIMITS,
      logger: logger.child({ part: 'sync' }),
      onWeightsChanged: () => {
        rebuildManifest();
        void this.#registration?.refreshManifest();
      },
    });
    this.#syncer = syncer;
    // Jobs are validated with the limits the coordinators published (read when the first job
    // arrives, again when one fails them): a coordinator may enforce wider ones than the defaults.
    const fleetLimits = new FleetLimits({
      read: () => this.#redis.hgetall(this.#keys.limits),
      onUnreadable: (fields) =>
        logger.warn({ fields }, 'unreadable published limits: defaults used'),
    });
    const runner = new RolloutJobRunner({
      workerId: options.workerId,
      limits: fleetLimits,
      manifest: () => this.manifest(),
      instance: (model) => host.instance(model),
      ensureWeights: (component, requirement, signal) =>
        syncer.ensure(component, requirement, options.weightsWaitMs, signal),
      putResults: (jobId, files, signal) => client.putResults(jobId, files, signal),
      logger,
    });
    const lanes = new LaneServer({
      redis: this.#redis,
      blocking: this.#blockingConnection,
      keys: this.#keys,
      workerId: options.workerId,
      locks: options.locks,
      gate: this.#gate,
      pollIntervalMs: options.pollIntervalMs,
      run: (lane, job, signal) => runner.run(lane, job, signal),
      logger,
      onChange: () => this.#registration?.beatSoon(),
    });
    this.#lanes = lanes;
    const watcher = new LaneWatcher({
      redis: this.#redis,
      keys: this.#keys,
      manifest: () => this.manifest(),
      serve: (spec) => lanes.serve(spec),
      logger,
    });
    this.#watcher = watcher;
    await new FleetSubscriber({
      redis: this.#subscriberConnection,
      handlers: {
        [this.#keys.laneChannel]: (message) => watcher.handleMessage(message),
        [this.#keys.syncChannel]: (message) => syncer.handleMessage(message),
      },
      onResubscribed: () => void this.#rescan(),
      logger,
    }).start();
    try {
      await syncer.catchUp();
    } catch (error) {
      logger.error({ err: error }, 'catching up on weight syncs failed; the next rescan retries');
    }
    this.#registration = new WorkerRegistration({
      redis: this.#redis,
      keys: this.#keys,
      workerId: options.workerId,
      heartbeatTtlMs: options.heartbeatTtlMs,
      manifest: () => this.manifest(),
      load: () => ({ activeJobs: lanes.activeJobs, lanes: watcher.served() }),
      logger,
    });
    this.#checkNotClosed();
    await this.#registration.start();
    await watcher.rescan();
    this.#checkNotClosed();
    lanes.start();
    this.#scheduleRescan();
    logger.info(
      {
        platform: platform.facts,
        backend: options.backend,
        concurrency: options.concurrency,
        weights: host.held(),
        lanes: watcher.served(),
      },
      'worker started',
    );
  }

  async #rescan(): Promise<void> {
    try {
      await this.#watcher?.rescan();
      await this.#syncer?.catchUp();
    } catch (error) {
      this.#logger.warn({ err: error }, 'rescan failed');
    }
  }

  #scheduleRescan(): void {
    if (this.#closeRequested) return;
    this.#rescanTimer = setTimeout(
      () => void this.#rescan().finally(() => this.#scheduleRescan()),
      this.#options.rescanIntervalMs,
    );
  }

  close(): Promise<void> {
    this.#closeRequested = true;
    this.#closing ??= (async () => {
      // A start-up in flight stops at its next check; then everything it built is closed.
      await this.#starting?.catch(() => undefined);
      await this.#shutDown();
    })();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    const logger = this.#logger;
    let drained = true;
    const steps: [string, () => Promise<unknown>][] = [
      [
        'stop fetching',
        async () => {
          clearTimeout(this.#rescanTimer);
          await this.#lanes?.stopFetching();
        },
      ],
      [
        'drain',
        async () => (drained = (await this.#lanes?.drain(this.#options.drainTimeoutMs)) ?? true),
      ],
      ['weight syncs', async () => this.#syncer?.close()],
      ['heartbeat', async () => this.#registration?.close()],
      ['lane workers', async () => this.#lanes?.close(!drained)],
      ['coordinator connections', async () => this.#coordinator?.close()],
      ['models', async () => this.#host?.close()],
      ['compute pool', async () => this.#pool?.close()],
      ['redis', () => Promise.all([this.#subscriberConnection, this.#redis].map(quitRedis))],
      ['redis (events)', async () => this.#blockingConnection.disconnect()],
    ];
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (error) {
        logger.error({ err: error, step: name }, 'shutdown step failed');
      }
    }
    logger.info('worker closed');
  }

  stats(): WorkerStats {
    return {
      workerId: this.workerId,
      activeJobs: this.#lanes?.activeJobs ?? 0,
      maxActiveJobs: this.#gate.highWater,
      lanes: this.#watcher?.served() ?? [],
      weights: this.#host?.held() ?? {},
    };
  }

  manifest(): WorkerManifest {
    if (this.#manifest === undefined) throw new Error('the worker has not started');
    return this.#manifest;
  }

  modelInstance(model?: string): ModelInstance {
    if (this.#host === undefined) throw new Error('the worker has not started');
    return this.#host.instance(model ?? this.#host.models[0] ?? '');
  }

  whyNotServing(lane: string): readonly string[] | undefined {
    return this.#watcher?.reasons(lane);
  }
}
