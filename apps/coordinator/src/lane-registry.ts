import {
  LaneSpecSchema,
  type LaneSpec,
  type Requirements,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { CoordinatorKeys } from './keys.js';

/**
 * The lanes the coordinator has recorded (`HSET lanes <lane> <LaneSpec>`). A new lane is announced
 * on the lane channel so running workers subscribe to it without polling.
 */
export class LaneRegistry {
  readonly #redis: RedisClient;
  readonly #keys: CoordinatorKeys;
  readonly #logger: Logger;
  /** Lanes known to be recorded (a lane record is never deleted), so they are not written again. */
  readonly #recorded = new Set<string>();
  /** Each record as last read: its text and the spec it validated to (a record is validated once). */
  readonly #parsed = new Map<string, { readonly json: string; readonly spec: LaneSpec }>();

  constructor(redis: RedisClient, keys: CoordinatorKeys, logger: Logger) {
    this.#redis = redis;
    this.#keys = keys;
    this.#logger = logger;
  }

  /**
   * Records `lane` with its requirements; announces it when it is new. Returns true when new.
   * HSETNX makes concurrent coordinators agree on one record and one announcement; a lane this
   * coordinator has seen recorded costs nothing.
   */
  async record(lane: string, requirements: Requirements): Promise<boolean> {
    if (this.#recorded.has(lane)) return false;
    const spec: LaneSpec = { lane, requirements, createdAt: new Date().toISOString() };
    const json = JSON.stringify(spec);
    const created = await this.#redis.hsetnx(this.#keys.lanes, lane, json);
    this.#recorded.add(lane);
    if (created === 1) {
      await this.#redis.publish(this.#keys.laneChannel, json);
      this.#logger.info({ lane, requirements }, 'recorded a new lane');
    }
    return created === 1;
  }

  /** True when `lane` is recorded (asked of Redis once, then known). */
  async isRecorded(lane: string): Promise<boolean> {
    if (this.#recorded.has(lane)) return true;
    const exists = (await this.#redis.hexists(this.#keys.lanes, lane)) === 1;
    if (exists) this.#recorded.add(lane);
    return exists;
  }

  /**
   * Every recorded lane, sorted by name; malformed records are logged and left out. Each record's
   * text is validated once (the schema recomputes the lane's hash), then known by its text.
   */
  async list(): Promise<LaneSpec[]> {
    const all = await this.#redis.hgetall(this.#keys.lanes);
    const lanes: LaneSpec[] = [];
    for (const [lane, json] of Object.entries(all)) {
      const known = this.#parsed.get(lane);
      if (known?.json === json) {
        lanes.push(known.spec);
        continue;
      }
      const parsed = parseRedisJson(LaneSpecSchema, json);
      if (parsed.success && parsed.data.lane === lane) {
        this.#parsed.set(lane, { json, spec: parsed.data });
        lanes.push(parsed.data);
      } else {
        this.#parsed.delete(lane);
        this.#logger.warn({ lane }, 'ignoring a malformed lane record');
      }
    }
    return lanes.sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
  }
}
