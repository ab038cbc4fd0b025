import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { EnqueuedRollout, RolloutRequestInput } from '@flowfleet/protocol';
import type { CallOptions } from './http-transport.js';

/** One group of a rollout round: a prompt and its seeds. */
export interface RoundGroup {
  readonly prompt: string;
  readonly seeds: readonly number[];
}

/** What every group of a round shares: the request without prompt and seeds. */
export type RoundCommon = Omit<RolloutRequestInput, 'prompt' | 'seeds'>;

/** What enqueueing a round needs: enqueueing one rollout. */
export interface RolloutEnqueuer {
  enqueueRollouts(request: RolloutRequestInput, call?: CallOptions): Promise<EnqueuedRollout>;
}

/** Requests of a round in flight at once. */
export const ROUND_CONCURRENCY = 4;

/**
 * Enqueues one rollout per group (`common` settings with each prompt and seeds), a few at a
 * time, and answers them in the order of `groups`. On the first failure no further group is
 * sent; the error keeps its code and message and lists the rollouts already enqueued in
 * `details.enqueued` (the original error is its cause).
 * @throws whatever `enqueueRollouts` throws
 */
export async function enqueueRound(
  enqueuer: RolloutEnqueuer,
  groups: readonly RoundGroup[],
  common: RoundCommon,
  call?: CallOptions,
): Promise<EnqueuedRollout[]> {
  const results: (EnqueuedRollout | undefined)[] = new Array(groups.length);
  let next = 0;
  let failure: unknown;
  const sender = async (): Promise<void> => {
    while (failure === undefined && next < groups.length) {
      const index = next++;
      const group = groups[index] as RoundGroup;
      try {
        results[index] = await enqueuer.enqueueRollouts(
          { ...common, prompt: group.prompt, seeds: [...group.seeds] },
          call,
        );
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ROUND_CONCURRENCY, groups.length) }, sender));
  if (failure === undefined) return results as EnqueuedRollout[];
  const enqueued = results.filter((r): r is EnqueuedRollout => r !== undefined);
  if (enqueued.length === 0 || !isFlowfleetError(failure)) throw failure;
  throw new FlowfleetError(
    failure.code,
    `${failure.message} (${enqueued.length} of ${groups.length} rollouts were enqueued before it)`,
    { details: { ...failure.details, enqueued }, cause: failure },
  );
}
