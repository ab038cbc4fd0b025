import { FlowfleetError } from '@flowfleet/errors';
import { isWeightRequirementMet, type ResolvedWeightRequirement } from '@flowfleet/protocol';
import type { DesiredState } from './desired-state.js';

/** A refusal remembered per version: never tried again. */
export interface Refusal {
  readonly code: string;
  readonly message: string;
}

/** What the waits read: what is held, and what was refused here. */
export interface WaitFacts {
  held(component: string): number | undefined;
  refusal(component: string, version: number): Refusal | undefined;
}

/** A job waiting for its weights. */
interface Waiter {
  readonly component: string;
  readonly requirement: ResolvedWeightRequirement;
  /** Why it is not met yet (the error's reason when its wait runs out). */
  reason: string;
  settle(error?: unknown): void;
}

function unavailable(
  component: string,
  requirement: ResolvedWeightRequirement,
  held: number | undefined,
  reason: string,
): FlowfleetError {
  return new FlowfleetError(
    'WORKER_WEIGHTS_UNAVAILABLE',
    `${component}: cannot reach ${JSON.stringify(requirement)} (holds ${held ?? 'none'}): ${reason}`,
    { details: { component, requirement, held: held ?? null, reason } },
  );
}

/**
 * The jobs waiting for a weight version (the reconciler's `ensure`): each wait is settled by the
 * reconcile passes of its component — met, never reachable here (a refused version, an exact
 * version behind the held one, every version at or above a min refused), or out of time.
 */
export class WeightWaiters {
  readonly #facts: WaitFacts;
  readonly #waiters = new Set<Waiter>();

  constructor(facts: WaitFacts) {
    this.#facts = facts;
  }

  /**
   * Waits at most `waitMs` until `requirement` of `component` is met; `queue` is called once the
   * wait is registered (the component is then reconciled).
   * @throws FlowfleetError WORKER_WEIGHTS_UNAVAILABLE; the signal's reason when it aborts
   */
  async wait(
    component: string,
    requirement: ResolvedWeightRequirement,
    waitMs: number,
    queue: () => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const held = this.#facts.held(component);
    if (isWeightRequirementMet(held, requirement)) return;
    const never = this.#unreachable(component, requirement, undefined);
    if (never !== undefined) throw unavailable(component, requirement, held, never);
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const now = this.#facts.held(component);
        waiter.settle(unavailable(component, requirement, now, waiter.reason));
      }, waitMs);
      const onAbort = (): void => waiter.settle(signal?.reason);
      const waiter: Waiter = {
        component,
        requirement,
        reason: 'no synced version meets it yet',
        settle: (error) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.#waiters.delete(waiter);
          if (error === undefined) resolve();
          else reject(error instanceof Error ? error : new Error(String(error)));
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      queue();
    });
  }

  /** The requirements jobs wait for on `component`. */
  requirements(component: string): ResolvedWeightRequirement[] {
    return this.#of(component).map((waiter) => waiter.requirement);
  }

  /** True while a job waits on `component`. */
  has(component: string): boolean {
    return this.#of(component).length > 0;
  }

  /** Settles the waits on `component` that are now met or can never be (read `state`). */
  settle(component: string, state: DesiredState | undefined): void {
    const held = this.#facts.held(component);
    for (const waiter of this.#of(component)) {
      if (isWeightRequirementMet(held, waiter.requirement)) {
        waiter.settle();
        continue;
      }
      const never = this.#unreachable(component, waiter.requirement, state);
      if (never !== undefined) {
        waiter.settle(unavailable(component, waiter.requirement, held, never));
      }
    }
  }

  /** Records why the waits on `component` are not met yet (their reason if they run out). */
  note(component: string, reason: string): void {
    for (const waiter of this.#of(component)) waiter.reason = reason;
  }

  /** Ends every wait with `reason` (the worker is closing). */
  endAll(reason: string): void {
    for (const waiter of [...this.#waiters]) {
      waiter.settle(unavailable(waiter.component, waiter.requirement, undefined, reason));
    }
  }

  #of(component: string): Waiter[] {
    return [...this.#waiters].filter((waiter) => waiter.component === component);
  }

  /** Why `requirement` can never be met here now, or undefined while it may be. */
  #unreachable(
    component: string,
    requirement: ResolvedWeightRequirement,
    state: DesiredState | undefined,
  ): string | undefined {
    const held = this.#facts.held(component);
    if (held === undefined) return 'this worker has no such component';
    if ('exact' in requirement) {
      if (held > requirement.exact) {
        return 'versions only increase, and this worker already holds a newer one';
      }
      return this.#facts.refusal(component, requirement.exact)?.message;
    }
    if (state === undefined) return undefined;
    const above = [...state.versions.keys()].filter((version) => version >= requirement.min);
    const refusals = above.map((version) => this.#facts.refusal(component, version));
    if (above.length > 0 && refusals.every((refusal) => refusal !== undefined)) {
      return refusals.map((refusal) => refusal.message).join('; ');
    }
    return undefined;
  }
}
