import type { ComputePool, ComputeThreadStats } from '@flowfleet/platform';
import type { WorkerManifest } from '@flowfleet/protocol';
import type { ModelInstance } from '@flowfleet/runtime';
import { pino } from 'pino';
import { workerKeys } from './keys.js';
import { ConcurrencyGate } from './lanes/concurrency-gate.js';
import { catchUpWeights } from './start-up/catch-up-weights.js';
import { connectRedis } from './start-up/connect-redis.js';
import { linkFleet, type FleetLink } from './start-up/link-fleet.js';
import { loadModels, type ModelParts } from './start-up/load-models.js';
import { openLanes, type LaneParts } from './start-up/open-lanes.js';
import { registerWorker } from './start-up/register-worker.js';
import { serveLanes } from './start-up/serve-lanes.js';
import { ShutdownPlan, type PhaseParts, type StartUpContext } from './start-up/shutdown-plan.js';
import { startCompute } from './start-up/start-compute.js';
import { resolveWorkerOptions, type WorkerOptions } from './worker-options.js';
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
  return new FleetWorker({ options: resolved, keys, logger });
}

/**
 * A worker: `start()` runs the start-up phases of `./start-up/` in order, each given the typed
 * parts of the phases before it; `close()` runs their shutdown steps in reverse.
 */
class FleetWorker implements FlowfleetWorker {
  readonly workerId: string;
  readonly #context: StartUpContext;
  readonly #gate: ConcurrencyGate;
  readonly #plan = new ShutdownPlan();
  #models: ModelParts | undefined;
  #compute: ComputePool | undefined;
  #link: FleetLink | undefined;
  #lanes: LaneParts | undefined;
  #starting: Promise<void> | undefined;
  #closeRequested = false;
  #closing: Promise<void> | undefined;

  constructor(context: StartUpContext) {
    this.workerId = context.options.workerId;
    this.#context = context;
    this.#gate = new ConcurrencyGate(context.options.concurrency);
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

  async #startUp(): Promise<void> {
    const context = this.#context;
    const { options, logger } = context;
    const redis = this.#started(await connectRedis(context));
    const compute = this.#started(await startCompute(context));
    this.#compute = compute.pool;
    const models = (this.#models = this.#started(await loadModels(context, { compute })));
    const link = (this.#link = this.#started(linkFleet(context, { redis, compute, models })));
    const weights = this.#started(await catchUpWeights(context, { redis, compute, models, link }));
    const gate = this.#gate;
    const lanes = this.#started(openLanes(context, { gate, redis, models, link, weights }));
    this.#lanes = lanes;
    this.#started(await registerWorker(context, { redis, link, lanes }));
    this.#started(await serveLanes(context, { redis, weights, lanes }));
    logger.info(
      {
        platform: compute.backends.facts,
        backend: options.backend,
        concurrency: options.concurrency,
        weights: models.host.held(),
        lanes: lanes.watcher.served(),
      },
      'worker started',
    );
  }

  /**
   * Records what a phase started (so close undoes it), then stops a start-up that a close()
   * overtook before it builds anything more.
   */
  #started<P extends PhaseParts>(parts: P): P {
    this.#plan.add(parts);
    if (this.#closeRequested) throw new Error('the worker was closed during start-up');
    return parts;
  }

  close(): Promise<void> {
    this.#closeRequested = true;
    this.#closing ??= (async () => {
      // A start-up in flight stops after its current phase; then everything it started closes.
      await this.#starting?.catch(() => undefined);
      await this.#plan.run(this.#context.logger);
      this.#context.logger.info('worker closed');
    })();
    return this.#closing;
  }

  stats(): WorkerStats {
    return {
      workerId: this.workerId,
      activeJobs: this.#lanes?.server.activeJobs ?? 0,
      maxActiveJobs: this.#gate.highWater,
      lanes: this.#lanes?.watcher.served() ?? [],
      weights: this.#models?.host.held() ?? {},
      embeds: {
        cacheBytes: this.#lanes?.embeds.bytes ?? 0,
        fetches: this.#lanes?.embeds.fetches ?? 0,
      },
    };
  }

  computeStats(): Promise<readonly ComputeThreadStats[]> {
    return this.#compute === undefined || this.#compute.isClosed
      ? Promise.resolve([])
      : this.#compute.stats();
  }

  manifest(): WorkerManifest {
    if (this.#link === undefined) throw new Error('the worker has not started');
    return this.#link.manifest.current();
  }

  modelInstance(model?: string): ModelInstance {
    if (this.#models === undefined) throw new Error('the worker has not started');
    const { host } = this.#models;
    return host.instance(model ?? host.models[0] ?? '');
  }

  whyNotServing(lane: string): readonly string[] | undefined {
    return this.#lanes?.watcher.reasons(lane);
  }
}
