import { publishedLimitsOf, type Limits } from './limits.js';
import { parseOrThrow } from './parse-or-throw.js';
import { rolloutJobSchema, type RolloutJob } from './rollout-job.js';

/** Where the fleet limits come from. */
export interface FleetLimitsOptions {
  /**
   * Reads the fleet limits hash, e.g. `() => redis.hgetall(keys.limits)` (protocol does no I/O of
   * its own: the app owns the connection).
   */
  readonly read: () => Promise<Record<string, string>>;
  /** Told when a published field is unreadable (its default is used instead). */
  readonly onUnreadable?: (fields: readonly string[]) => void;
}

interface Snapshot {
  readonly limits: Limits;
  readonly schema: ReturnType<typeof rolloutJobSchema>;
}

/**
 * The limits the fleet's coordinators published (DESIGN §5), for the readers of stored jobs: the
 * workers on dequeue and the coordinators' status views. Read on first use and kept; a job refused
 * under the kept limits is checked once more after a fresh read, because published limits only
 * ever widen (so a kept copy can only be too strict, never too lax). With nothing published yet,
 * the limits are DEFAULT_LIMITS: what a coordinator enforces unless told otherwise, and no job can
 * be queued before the coordinator that accepted it has published.
 */
export class FleetLimits {
  readonly #options: FleetLimitsOptions;
  #snapshot: Promise<Snapshot> | undefined;

  constructor(options: FleetLimitsOptions) {
    this.#options = options;
  }

  /** The published limits (read on first use, then kept until `refresh`). */
  async current(): Promise<Limits> {
    return (await this.#current()).limits;
  }

  /** Reads the published limits again. */
  async refresh(): Promise<Limits> {
    return (await this.#read()).limits;
  }

  /**
   * Parses a stored rollout job payload under the published limits.
   * @throws FlowfleetError PROTO_INVALID_JOB when it fails the job schema under freshly read
   *   limits; whatever `read` throws when the limits cannot be read.
   */
  async parseJob(data: unknown): Promise<RolloutJob> {
    const kept = await this.#current();
    const first = kept.schema.safeParse(data);
    if (first.success) return first.data;
    const fresh = await this.#read();
    return parseOrThrow(fresh.schema, data, 'PROTO_INVALID_JOB', 'rollout job');
  }

  #current(): Promise<Snapshot> {
    return this.#snapshot ?? this.#read();
  }

  #read(): Promise<Snapshot> {
    const reading = this.#options.read().then((fields) => {
      const { limits, unreadable } = publishedLimitsOf(fields);
      if (unreadable.length > 0) this.#options.onUnreadable?.(unreadable);
      return { limits, schema: rolloutJobSchema(limits) };
    });
    this.#snapshot = reading;
    // A failed read is not kept: the next caller reads again.
    reading.catch(() => {
      if (this.#snapshot === reading) this.#snapshot = undefined;
    });
    return reading;
  }
}
