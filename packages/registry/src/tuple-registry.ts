import { FlowfleetError } from '@flowfleet/errors';

/** Where a cell came from: the backend that registered it (`cpu`, `ort-cpu`, …) or a card. */
export type CellSource = string;

/** Free-form facts about a cell that the manifest carries (e.g. `workspaceBytes`). */
export type CellMeta = Readonly<Record<string, string | number | boolean>>;

/** An availability predicate; a throw counts as "unavailable" and its message is kept. */
export type AvailabilityPredicate = () => boolean;

/** One registered cell of a TupleRegistry. */
export interface Cell<F> {
  readonly key: readonly string[];
  readonly fn: F;
  readonly available: AvailabilityPredicate;
  readonly source: CellSource;
  readonly meta: CellMeta;
}

/** What `register` takes; `available` defaults to "always". */
export interface CellInput<F> {
  readonly key: readonly string[];
  readonly fn: F;
  readonly source: CellSource;
  readonly available?: AvailabilityPredicate;
  readonly meta?: CellMeta;
  /** Replace an existing cell instead of throwing REG_DUPLICATE_CELL. */
  readonly replace?: boolean;
}

/** The outcome of one availability probe. */
export interface Availability {
  readonly available: boolean;
  /** Why not, when unavailable (the predicate said false, or threw). */
  readonly reason?: string;
}

/** One candidate that `resolveFirst` passed over, and why. */
export interface RejectedCandidate {
  readonly key: readonly string[];
  readonly reason: string;
}

/** The result of `resolveFirst`: the winning cell (if any) and every candidate rejected first. */
export interface Resolution<F> {
  readonly cell: Cell<F> | undefined;
  readonly rejected: readonly RejectedCandidate[];
}

/** One manifest row: a declared cell, available or not, without its callable. */
export interface ManifestRow {
  readonly registry: string;
  readonly key: Readonly<Record<string, string>>;
  readonly available: boolean;
  readonly reason?: string;
  readonly source: CellSource;
  readonly meta: CellMeta;
}

const SEP = '\u0000';

/**
 * A registry of callables keyed by a fixed-arity tuple of strings, e.g. (op, device, arch,
 * variant). It stores declarations only: nothing is probed until `isAvailable` or `manifest`.
 */
export class TupleRegistry<F> {
  readonly name: string;
  readonly keyFields: readonly string[];
  readonly #cells = new Map<string, Cell<F>>();

  constructor(name: string, keyFields: readonly string[]) {
    this.name = name;
    this.keyFields = Object.freeze([...keyFields]);
  }

  /**
   * Declare a cell.
   * @throws FlowfleetError REG_KEY_ARITY, REG_INVALID_KEY, REG_DUPLICATE_CELL
   */
  register(input: CellInput<F>): Cell<F> {
    const id = this.#id(input.key);
    if (this.#cells.has(id) && input.replace !== true) {
      throw new FlowfleetError(
        'REG_DUPLICATE_CELL',
        `${this.name}: a cell is already registered at (${input.key.join(', ')})`,
        { details: { registry: this.name, key: [...input.key] } },
      );
    }
    const cell: Cell<F> = Object.freeze({
      key: Object.freeze([...input.key]),
      fn: input.fn,
      available: input.available ?? (() => true),
      source: input.source,
      meta: Object.freeze({ ...input.meta }),
    });
    this.#cells.set(id, cell);
    return cell;
  }

  /** Remove a cell; returns whether one was there. @throws FlowfleetError REG_KEY_ARITY */
  unregister(key: readonly string[]): boolean {
    return this.#cells.delete(this.#id(key));
  }

  /** The cell at exactly this key, available or not. @throws FlowfleetError REG_KEY_ARITY */
  get(key: readonly string[]): Cell<F> | undefined {
    return this.#cells.get(this.#id(key));
  }

  /** True when a cell is declared at this key. @throws FlowfleetError REG_KEY_ARITY */
  has(key: readonly string[]): boolean {
    return this.#cells.has(this.#id(key));
  }

  /** Every declared cell, in registration order. */
  cells(): readonly Cell<F>[] {
    return [...this.#cells.values()];
  }

  /** Runs a cell's predicate; a throw counts as unavailable. */
  probe(cell: Cell<F>): Availability {
    try {
      return cell.available()
        ? { available: true }
        : { available: false, reason: 'availability predicate returned false' };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { available: false, reason: `availability predicate threw: ${message}` };
    }
  }

  /** True when a cell is declared at `key` and its predicate holds (a throw is false). */
  isAvailable(key: readonly string[]): boolean {
    const cell = this.get(key);
    return cell !== undefined && this.probe(cell).available;
  }

  /**
   * The first candidate that is registered *and* available, with every candidate rejected
   * before it and the reason.
   * @throws FlowfleetError REG_KEY_ARITY when a candidate has the wrong arity
   */
  resolveFirst(candidates: readonly (readonly string[])[]): Resolution<F> {
    const rejected: RejectedCandidate[] = [];
    for (const key of candidates) {
      const cell = this.get(key);
      if (cell === undefined) {
        rejected.push({ key, reason: 'not registered' });
        continue;
      }
      const availability = this.probe(cell);
      if (availability.available) return { cell, rejected };
      rejected.push({ key, reason: availability.reason ?? 'unavailable' });
    }
    return { cell: undefined, rejected };
  }

  /**
   * Every declared cell (unavailable ones too) as data. Runs each predicate once; predicates
   * must be cheap and must not load heavy modules or touch a device.
   */
  manifest(): ManifestRow[] {
    return this.cells().map((cell) => {
      const availability = this.probe(cell);
      const key = Object.fromEntries(this.keyFields.map((field, i) => [field, cell.key[i] ?? '']));
      return {
        registry: this.name,
        key,
        available: availability.available,
        ...(availability.reason === undefined ? {} : { reason: availability.reason }),
        source: cell.source,
        meta: cell.meta,
      };
    });
  }

  #id(key: readonly string[]): string {
    if (!Array.isArray(key) || key.length !== this.keyFields.length) {
      throw new FlowfleetError(
        'REG_KEY_ARITY',
        `${this.name} keys are (${this.keyFields.join(', ')}); got ${Array.isArray(key) ? key.length : typeof key} field(s)`,
        { details: { registry: this.name, expected: this.keyFields.length, key: String(key) } },
      );
    }
    for (const [i, field] of key.entries()) {
      if (typeof field !== 'string' || field.length === 0) {
        throw new FlowfleetError(
          'REG_INVALID_KEY',
          `${this.name}: key field '${this.keyFields[i]}' must be a non-empty string`,
          { details: { registry: this.name, field: this.keyFields[i] ?? '' } },
        );
      }
    }
    return key.join(SEP);
  }
}
