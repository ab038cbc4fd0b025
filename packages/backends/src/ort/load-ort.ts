import type * as OrtModule from 'onnxruntime-node';
import { FlowfleetError } from '@flowfleet/errors';

/** The onnxruntime-node module namespace. */
export type Ort = typeof OrtModule;

let loading: Promise<Ort> | undefined;

/**
 * Loads onnxruntime-node on first use and returns the module; concurrent callers share one load
 * (the lazy `init()` of onnxruntime's backend-impl). Nothing in this package loads it at import
 * time, so `manifest()` and capability queries stay free of the native binding.
 * @throws BACK_ORT_LOAD_FAILED when the package or its native binding cannot be loaded (cached:
 *   a failed native load does not heal within a process).
 */
export function loadOrt(): Promise<Ort> {
  loading ??= import('onnxruntime-node').then(
    (ort) => {
      // Before anything else: a failed provider probe otherwise prints a warning block per attempt.
      ort.env.logLevel = 'fatal';
      return ort;
    },
    (cause: unknown) => {
      throw new FlowfleetError(
        'BACK_ORT_LOAD_FAILED',
        `onnxruntime-node could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    },
  );
  return loading;
}

/** True once `loadOrt()` has been called in this thread (tests use it to check laziness). */
export function isOrtLoadStarted(): boolean {
  return loading !== undefined;
}
