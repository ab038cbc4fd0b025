import { FlowfleetError } from '@flowfleet/errors';
import { isDone, type DrivenLoop, type StepInstance, type StepResult } from '@flowfleet/models';
import type { RuntimeLoopContext } from './runtime-loop-context.js';

/** Options of `runLoop`. */
export interface RunLoopOptions {
  /** Checked at every step boundary: an aborted signal stops before the next step. */
  readonly signal?: AbortSignal;
}

/**
 * Drives a loop to its end: init, then next → execute → advance until Done, then finalize.
 * Cancellation is honoured between steps (a running step finishes first).
 * @throws FlowfleetError RT_CANCELLED when `signal` aborts; whatever a step throws
 */
export async function runLoop<Req, S, R extends StepResult, Out>(
  loop: DrivenLoop<Req, S, R, Out>,
  request: Req,
  instance: StepInstance,
  context: RuntimeLoopContext,
  options: RunLoopOptions = {},
): Promise<Out> {
  const state = loop.init(request, instance);
  let stepsRun = 0;
  for (;;) {
    throwIfAborted(options.signal, stepsRun);
    const item = loop.next(state);
    if (isDone(item)) break;
    const result = await context.execute(item);
    loop.advance(state, result);
    stepsRun++;
  }
  return loop.finalize(state);
}

function throwIfAborted(signal: AbortSignal | undefined, stepsRun: number): void {
  if (signal?.aborted !== true) return;
  throw new FlowfleetError('RT_CANCELLED', `cancelled after ${stepsRun} step(s)`, {
    details: { stepsRun },
    cause: signal.reason,
  });
}
