import { FlowfleetError } from '@flowfleet/errors';
import type { WeightSet } from '@flowfleet/platform';

/** One resident weight version of one component. */
export interface ResidentVersion {
  readonly componentId: string;
  readonly version: number;
  readonly weights: WeightSet;
}

interface VersionRecord extends ResidentVersion {
  pins: number;
}

interface ComponentVersions {
  current: VersionRecord;
  readonly resident: Map<number, VersionRecord>;
}

/**
 * Per-component weight versions with pin counts: a rollout pins the current version of every
 * component when it starts, a new version becomes current for later pins, and a superseded
 * version is handed back for release once its last pin is dropped.
 */
export class WeightVersions {
  readonly #components = new Map<string, ComponentVersions>();

  constructor(initial: readonly ResidentVersion[]) {
    for (const entry of initial) {
      const record: VersionRecord = { ...entry, pins: 0 };
      this.#components.set(entry.componentId, {
        current: record,
        resident: new Map([[entry.version, record]]),
      });
    }
  }

  /** The current version of `componentId`. @throws FlowfleetError RT_UNKNOWN_COMPONENT */
  current(componentId: string): ResidentVersion {
    return this.#get(componentId).current;
  }

  /** Every version of `componentId` still held (current first). */
  resident(componentId: string): readonly number[] {
    const entry = this.#get(componentId);
    const others = [...entry.resident.keys()].filter((v) => v !== entry.current.version);
    return [entry.current.version, ...others];
  }

  /** Pins held on `version` of `componentId` (0 when not resident). */
  pins(componentId: string, version: number): number {
    return this.#get(componentId).resident.get(version)?.pins ?? 0;
  }

  /** Pins the current version of every component; the caller must `unpin` exactly once. */
  pin(): readonly ResidentVersion[] {
    return [...this.#components.values()].map((entry) => {
      entry.current.pins++;
      return entry.current;
    });
  }

  /** Drops pins taken by `pin`; returns the versions no longer needed (to release). */
  unpin(pinned: readonly ResidentVersion[]): ResidentVersion[] {
    const released: ResidentVersion[] = [];
    for (const { componentId, version } of pinned) {
      const entry = this.#get(componentId);
      const record = entry.resident.get(version);
      if (record === undefined) continue;
      record.pins = Math.max(0, record.pins - 1);
      if (record.pins === 0 && record !== entry.current) {
        entry.resident.delete(version);
        released.push(record);
      }
    }
    return released;
  }

  /**
   * Makes `version` current for `componentId`; returns the superseded version when nothing pins
   * it (release it now), else undefined (it is released by the last `unpin`).
   * @throws FlowfleetError RT_UNKNOWN_COMPONENT, RT_WEIGHTS_VERSION_EXISTS
   */
  stage(componentId: string, version: number, weights: WeightSet): ResidentVersion | undefined {
    const entry = this.#get(componentId);
    if (entry.resident.has(version)) {
      throw new FlowfleetError(
        'RT_WEIGHTS_VERSION_EXISTS',
        `component '${componentId}' already holds weights version '${version}'`,
        { details: { component: componentId, version, resident: this.resident(componentId) } },
      );
    }
    const previous = entry.current;
    const record: VersionRecord = { componentId, version, weights, pins: 0 };
    entry.resident.set(version, record);
    entry.current = record;
    if (previous.pins > 0) return undefined;
    entry.resident.delete(previous.version);
    return previous;
  }

  /** Every resident version of every component (for close). */
  all(): ResidentVersion[] {
    return [...this.#components.values()].flatMap((entry) => [...entry.resident.values()]);
  }

  #get(componentId: string): ComponentVersions {
    const entry = this.#components.get(componentId);
    if (entry === undefined) {
      throw new FlowfleetError('RT_UNKNOWN_COMPONENT', `no component '${componentId}'`, {
        details: { component: componentId, known: [...this.#components.keys()] },
      });
    }
    return entry;
  }
}
