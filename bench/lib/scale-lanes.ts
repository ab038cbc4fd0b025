// The lanes bench:scale records before it measures: 32 wan21-mini requirement sets (sampler ×
// device/arch constraints, as a trainer sweeping its fleet would ask) with one job each held in
// its backlog (`waitForCapacity`, so they exist before any simulated worker does and the same
// lanes are there at every fleet size). Nobody consumes them: the simulated workers run no jobs.
import type { FlowfleetClient } from '@flowfleet/client';
import type { RolloutRequestInput } from '@flowfleet/protocol';

type Constraint = NonNullable<RolloutRequestInput['constraints']>;

const CONSTRAINTS: readonly Constraint[] = [
  { devices: ['cpu'] },
  { devices: ['cpu'], minArch: { cpu: 'x86-64-v2' } },
  { devices: ['cpu'], minArch: { cpu: 'x86-64-v3' } },
  { devices: ['cpu'], minArch: { cpu: 'x86-64-v4' } },
  { devices: ['cpu'], minArch: { cpu: 'aarch64' } },
  { devices: ['cuda'] },
  { devices: ['cuda'], minArch: { cuda: 'sm80' } },
  { devices: ['cuda'], minArch: { cuda: 'sm86' } },
  { devices: ['cuda'], minArch: { cuda: 'sm89' } },
  { devices: ['cuda'], minArch: { cuda: 'sm90' } },
  { devices: ['cuda', 'cpu'] },
  { devices: ['cuda', 'cpu'], minArch: { cuda: 'sm89', cpu: 'x86-64-v3' } },
  { devices: ['webgpu'] },
  { devices: ['webgpu', 'cpu'] },
  { devices: ['cpu', 'cuda', 'webgpu'] },
  { devices: ['cpu', 'cuda', 'webgpu'], minArch: { cpu: 'x86-64-v3', cuda: 'sm86' } },
];

/** How many lanes `recordLanes` creates. */
export const SCALE_LANES = CONSTRAINTS.length * 2;

/** The `i`-th held job of a burst: round-robin over the lanes `recordLanes` made. */
export function heldLaneJob(i: number): RolloutRequestInput {
  const sampler = i % 2 === 0 ? 'sde' : 'ode';
  const constraints = CONSTRAINTS[Math.floor(i / 2) % CONSTRAINTS.length]!;
  return {
    model: 'wan21-mini',
    prompt: `scale burst ${i}`,
    seeds: [i + 1],
    steps: 2,
    sampler,
    constraints,
    waitForCapacity: true,
  };
}

/**
 * Enqueues one held wan21-mini job per requirement set and answers the distinct lanes.
 * @throws Error when two sets map to one lane (the count would be wrong)
 */
export async function recordLanes(client: FlowfleetClient): Promise<string[]> {
  const lanes = new Set<string>();
  for (let i = 0; i < SCALE_LANES; i += 1) {
    lanes.add((await client.enqueueRollouts(heldLaneJob(i))).lane);
  }
  if (lanes.size !== SCALE_LANES)
    throw new Error(`expected ${SCALE_LANES} lanes, got ${lanes.size}`);
  return [...lanes];
}
