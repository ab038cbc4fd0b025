import type { ClassScaling } from '@flowfleet/protocol';
import { Counter, Gauge, Registry } from 'prom-client';
import type { LaneCounts } from './lane-queues.js';

/** One scrape's worth of fleet facts (read from Redis just before rendering). */
export interface MetricsSnapshot {
  readonly liveWorkers: number;
  readonly deadWorkers: number;
  readonly lanes: ReadonlyMap<string, LaneCounts>;
  /** Component → latest synced version minus the lowest version a live worker holds. */
  readonly syncLag: ReadonlyMap<string, number>;
  /** Component → latest synced version. */
  readonly latestVersions: ReadonlyMap<string, number>;
  /** The scaling hints per device class (as `GET /v1/scaling` answers them). */
  readonly scaling: readonly ClassScaling[];
  /** Live worker id → float32 bytes of its text-embedding cache (from its heartbeat). */
  readonly embedsCacheBytes: ReadonlyMap<string, number>;
}

/** The scaling gauges (the SCALING-CONTRACT names), each labelled `device_class`. */
const SCALING_GAUGES = [
  ['desiredReplicas', 'flowfleet_scaling_desired_replicas', 'Replicas the scaling rule asks for'],
  [
    'exclusiveBacklog',
    'flowfleet_scaling_exclusive_backlog',
    'Jobs waiting on lanes only this device class can serve',
  ],
  [
    'sharedBacklog',
    'flowfleet_scaling_shared_backlog',
    'Jobs waiting on lanes this and other device classes can serve',
  ],
  ['capacity', 'flowfleet_scaling_capacity', 'Rollout slots of the live workers of the class'],
  ['workers', 'flowfleet_scaling_workers', 'Live workers of the device class'],
] as const satisfies readonly (readonly [keyof ClassScaling, string, string])[];

/**
 * The coordinator's Prometheus metrics in a registry of its own (several coordinators in one
 * process, as in tests, never share or clash).
 */
export class CoordinatorMetrics {
  readonly registry = new Registry();
  readonly #laneDepth: Gauge<'lane'>;
  readonly #jobs: Gauge<'lane' | 'state'>;
  readonly #syncLag: Gauge<'component'>;
  readonly #weightVersion: Gauge<'component'>;
  readonly #workers: Gauge<'state'>;
  readonly #embedsCache: Gauge<'worker'>;
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #scaling: readonly (readonly [keyof ClassScaling, Gauge<'device_class'>])[];

  constructor() {
    const registers = [this.registry];
    this.#laneDepth = new Gauge({
      name: 'flowfleet_lane_depth',
      help: 'Jobs waiting to start on a lane (waiting + delayed + prioritized)',
      labelNames: ['lane'],
      registers,
    });
    this.#jobs = new Gauge({
      name: 'flowfleet_jobs',
      help: 'Jobs on a lane by BullMQ state',
      labelNames: ['lane', 'state'],
      registers,
    });
    this.#syncLag = new Gauge({
      name: 'flowfleet_weight_sync_lag',
      help: 'Latest synced weight version minus the lowest version a live worker holds',
      labelNames: ['component'],
      registers,
    });
    this.#weightVersion = new Gauge({
      name: 'flowfleet_weight_version',
      help: 'Latest synced weight version per component',
      labelNames: ['component'],
      registers,
    });
    this.#embedsCache = new Gauge({
      name: 'flowfleet_worker_embeds_cache_bytes',
      help: "Float32 bytes of a live worker's text-embedding cache (by sha256)",
      labelNames: ['worker'],
      registers,
    });
    this.#workers = new Gauge({
      name: 'flowfleet_workers',
      help: 'Registered workers by liveness',
      labelNames: ['state'],
      registers,
    });
    this.#requests = new Counter({
      name: 'flowfleet_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#scaling = SCALING_GAUGES.map(
      ([field, name, help]) =>
        [field, new Gauge({ name, help, labelNames: ['device_class'], registers })] as const,
    );
  }

  /** Counts one answered request. */
  countRequest(method: string, route: string, status: number): void {
    this.#requests.inc({ method, route, status: String(status) });
  }

  /** Replaces every fleet gauge with the snapshot's values (stale label sets disappear). */
  apply(snapshot: MetricsSnapshot): void {
    this.#laneDepth.reset();
    this.#jobs.reset();
    this.#syncLag.reset();
    this.#weightVersion.reset();
    this.#workers.set({ state: 'live' }, snapshot.liveWorkers);
    this.#workers.set({ state: 'dead' }, snapshot.deadWorkers);
    for (const [lane, counts] of snapshot.lanes) {
      this.#laneDepth.set({ lane }, counts.waiting + counts.delayed + counts.prioritized);
      for (const [state, count] of Object.entries(counts)) this.#jobs.set({ lane, state }, count);
    }
    for (const [component, lag] of snapshot.syncLag) this.#syncLag.set({ component }, lag);
    this.#embedsCache.reset();
    for (const [worker, bytes] of snapshot.embedsCacheBytes) {
      this.#embedsCache.set({ worker }, bytes);
    }
    for (const [component, version] of snapshot.latestVersions) {
      this.#weightVersion.set({ component }, version);
    }
    for (const [field, gauge] of this.#scaling) {
      gauge.reset();
      for (const entry of snapshot.scaling) {
        gauge.set({ device_class: entry.deviceClass }, entry[field] as number);
      }
    }
  }

  /** The text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition Content-Type. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
