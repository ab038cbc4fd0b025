import { FlowfleetError } from '@flowfleet/errors';

/** One key vocabulary a checkpoint of a component may use (e.g. diffusers'). */
export interface CheckpointVocabulary {
  readonly name: string;
  /** The key of the card parameter `cardName` in this vocabulary. */
  keyOf(cardName: string): string;
}

/**
 * How a card reads the checkpoints users bring for one component: the vocabularies besides its
 * own names, and the prefixes a checkpoint may put before every key (`transformer.` …).
 */
export interface CheckpointKeys {
  readonly prefixes: readonly string[];
  readonly vocabularies: readonly CheckpointVocabulary[];
  /**
   * Keys (after a prefix) of other modules the published file also holds, skipped rather than
   * refused as unexpected (e.g. an autoencoder file whose encoder the component does not use).
   */
  readonly ignoredPrefixes?: readonly string[];
}

/** A checkpoint key resolved to the card's name. */
export interface ResolvedKey {
  readonly name: string;
  /** `card` for the card's own names, else the vocabulary's name. */
  readonly vocabulary: string;
  /** The key without the prefix it was found under. */
  readonly unprefixed: string;
}

/**
 * The key lookup of one component: every card name under every vocabulary, plus prefixes.
 * Built once per component spec (`checkpointKeyLookup`).
 */
export class CheckpointKeyLookup {
  readonly #byKey: ReadonlyMap<string, { name: string; vocabulary: string }>;
  readonly #prefixes: readonly string[];
  readonly #ignored: readonly string[];

  private constructor(
    byKey: ReadonlyMap<string, { name: string; vocabulary: string }>,
    prefixes: readonly string[],
    ignored: readonly string[],
  ) {
    this.#byKey = byKey;
    this.#prefixes = prefixes;
    this.#ignored = ignored;
  }

  /**
   * The lookup of a component with these parameter names.
   * @throws FlowfleetError MODEL_CONFIG_INVALID when two card names share a key in some
   *   vocabulary (the card's maps would be ambiguous)
   */
  static create(names: Iterable<string>, keys?: CheckpointKeys): CheckpointKeyLookup {
    const byKey = new Map<string, { name: string; vocabulary: string }>();
    const add = (key: string, name: string, vocabulary: string): void => {
      const known = byKey.get(key);
      if (known !== undefined && known.name !== name) {
        throw new FlowfleetError(
          'MODEL_CONFIG_INVALID',
          `checkpoint key ${key} (${vocabulary}) names both ${known.name} and ${name}`,
          { details: { key, names: [known.name, name], vocabulary } },
        );
      }
      if (known === undefined) byKey.set(key, { name, vocabulary });
    };
    const list = [...names];
    for (const name of list) add(name, name, 'card');
    for (const vocabulary of keys?.vocabularies ?? []) {
      for (const name of list) add(vocabulary.keyOf(name), name, vocabulary.name);
    }
    // Longest first, so `base_model.model.` wins over `model.`.
    const prefixes = [...(keys?.prefixes ?? [])].sort((a, b) => b.length - a.length);
    return new CheckpointKeyLookup(byKey, prefixes, keys?.ignoredPrefixes ?? []);
  }

  /** The card name of `key` (as is, or under one of the prefixes), or undefined. */
  resolve(key: string): ResolvedKey | undefined {
    const direct = this.#byKey.get(key);
    if (direct !== undefined) return { ...direct, unprefixed: key };
    for (const prefix of this.#prefixes) {
      if (!key.startsWith(prefix)) continue;
      const unprefixed = key.slice(prefix.length);
      const found = this.#byKey.get(unprefixed);
      if (found !== undefined) return { ...found, unprefixed };
    }
    return undefined;
  }

  /** Whether `key` (as is, or under a prefix) belongs to a module the component skips. */
  isIgnored(key: string): boolean {
    const unprefixed = this.strip(key);
    return this.#ignored.some((p) => key.startsWith(p) || unprefixed.startsWith(p));
  }

  /** `key` without the first of the prefixes it starts with (longest first). */
  strip(key: string): string {
    const prefix = this.#prefixes.find((p) => key.startsWith(p));
    return prefix === undefined ? key : key.slice(prefix.length);
  }
}

/**
 * A vocabulary defined by ordered substring renames applied to each card name, the way
 * conversion scripts rename a state_dict (every occurrence of each rule's `from`, rule by rule).
 */
export function renameVocabulary(
  name: string,
  rules: readonly (readonly [from: string, to: string])[],
): CheckpointVocabulary {
  return {
    name,
    keyOf(cardName: string): string {
      let key = cardName;
      for (const [from, to] of rules) key = key.split(from).join(to);
      return key;
    },
  };
}
