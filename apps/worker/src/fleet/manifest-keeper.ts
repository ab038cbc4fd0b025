import type { WorkerManifest } from '@flowfleet/protocol';
import { buildManifest, type ManifestInput } from './manifest.js';

/** What the keeper rebuilds the manifest from: fixed facts, and the weights read each time. */
export interface ManifestKeeperOptions {
  readonly input: Omit<ManifestInput, 'weights'>;
  readonly weights: () => Readonly<Record<string, number>>;
}

/**
 * The worker's current manifest: built once the models are loaded, rebuilt when a weight sync
 * stages a new version, and its listeners (the registration, which rewrites it in Redis) told.
 */
export class ManifestKeeper {
  readonly #options: ManifestKeeperOptions;
  readonly #listeners: (() => void)[] = [];
  #peerUrl: string | undefined;
  #manifest: WorkerManifest;

  /** @throws FlowfleetError PROTO_INVALID_MANIFEST */
  constructor(options: ManifestKeeperOptions) {
    this.#options = options;
    this.#manifest = this.#build();
  }

  current(): WorkerManifest {
    return this.#manifest;
  }

  /** Rebuilds the manifest (the weights changed) and tells the listeners. */
  refresh(): void {
    this.#manifest = this.#build();
    for (const listener of this.#listeners) listener();
  }

  /** Advertises the peer server's URL (before the worker registers). @throws PROTO_INVALID_MANIFEST */
  advertisePeer(peerUrl: string): void {
    this.#peerUrl = peerUrl;
    this.refresh();
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  #build(): WorkerManifest {
    return buildManifest({
      ...this.#options.input,
      weights: this.#options.weights(),
      ...(this.#peerUrl === undefined ? {} : { peerUrl: this.#peerUrl }),
    });
  }
}
