import type { Logger } from 'pino';
import type { WorkerKeys } from '../keys.js';
import type { ResolvedWorkerOptions } from '../worker-options.js';

/** What every start-up phase is given besides the parts of the phases before it. */
export interface StartUpContext {
  readonly options: ResolvedWorkerOptions;
  readonly keys: WorkerKeys;
  readonly logger: Logger;
}

/** One named step of the worker's shutdown (a failure is logged with its name). */
export interface ShutdownStep {
  readonly name: string;
  readonly run: () => Promise<unknown>;
}

/** What every start-up phase returns with its parts: the steps that undo it, in order. */
export interface PhaseParts {
  readonly shutdown: readonly ShutdownStep[];
}

/** A named shutdown step. */
export function step(name: string, run: () => Promise<unknown>): ShutdownStep {
  return { name, run };
}

/**
 * The shutdown steps of the phases started so far. Running it undoes the last phase first, so
 * shutdown is the reverse of start-up, and a start-up that fails midway closes exactly what it
 * started. Every step runs even when one fails; each phase's steps run once.
 */
export class ShutdownPlan {
  readonly #phases: (readonly ShutdownStep[])[] = [];

  /** Records what a phase started; answers its parts. */
  add<P extends PhaseParts>(parts: P): P {
    this.#phases.push(parts.shutdown);
    return parts;
  }

  async run(logger: Logger): Promise<void> {
    for (const steps of this.#phases.splice(0).reverse()) {
      for (const { name, run } of steps) {
        try {
          await run();
        } catch (error) {
          logger.error({ err: error, step: name }, 'shutdown step failed');
        }
      }
    }
  }
}
