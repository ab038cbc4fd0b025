import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { EnqueuedRollout, RolloutRequestInput } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { ROUND_CONCURRENCY, enqueueRound, type RolloutEnqueuer } from './enqueue-round.js';

const LANE = 'lane-0123456789abcdef';

/** An enqueuer whose answers arrive in reverse order of sending; fails the prompts in `failing`. */
function enqueuer(failing: ReadonlySet<string> = new Set()) {
  const sent: RolloutRequestInput[] = [];
  let inFlight = 0;
  let peak = 0;
  const source: RolloutEnqueuer = {
    async enqueueRollouts(request) {
      sent.push(request);
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      const order = sent.length;
      await new Promise((resolve) => setTimeout(resolve, 20 - order));
      inFlight -= 1;
      if (failing.has(request.prompt)) {
        throw new FlowfleetError('PROTO_INVALID_REQUEST', `bad ${request.prompt}`, {
          details: { issues: [] },
        });
      }
      return { id: `job-${request.prompt}`, lane: LANE, status: 'queued', eligibleWorkers: 1 };
    },
  };
  return { source, sent, peak: () => peak };
}

const groups = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ prompt: `p${i}`, seeds: [i, i + 100] }));

describe('enqueueRound', () => {
  it('answers in the order of the groups, a few in flight at once, with the common settings', async () => {
    const e = enqueuer();
    const round = await enqueueRound(e.source, groups(9), { model: 'wan21-mini', steps: 4 });
    expect(round.map((r: EnqueuedRollout) => r.id)).toEqual(
      groups(9).map((g) => `job-${g.prompt}`),
    );
    expect(e.peak()).toBe(ROUND_CONCURRENCY);
    expect(e.sent[3]).toEqual({ model: 'wan21-mini', steps: 4, prompt: 'p3', seeds: [3, 103] });
  });

  it('stops at the first failure and lists what was enqueued before it', async () => {
    const e = enqueuer(new Set(['p1']));
    let error: unknown;
    try {
      await enqueueRound(e.source, groups(12), { model: 'wan21-mini' });
    } catch (caught) {
      error = caught;
    }
    expect(isFlowfleetError(error, 'PROTO_INVALID_REQUEST')).toBe(true);
    const { details, cause } = error as FlowfleetError;
    const enqueued = (details as { enqueued: EnqueuedRollout[] }).enqueued;
    expect(enqueued.map((r) => r.id)).toContain('job-p0');
    expect(enqueued.map((r) => r.id)).not.toContain('job-p1');
    expect(e.sent.length).toBeLessThan(12);
    expect((cause as Error).message).toBe('bad p1');
  });

  it('rethrows the error unchanged when nothing was enqueued, and answers [] for no groups', async () => {
    const e = enqueuer(new Set(['p0']));
    await expect(enqueueRound(e.source, groups(1), { model: 'wan21-mini' })).rejects.toThrow(
      'bad p0',
    );
    expect(await enqueueRound(e.source, [], { model: 'wan21-mini' })).toEqual([]);
  });
});
