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

/**
 * Enqueues one held wan21-mini job per requirement set and answers the distinct lanes.
 * @throws Error when two sets map to one lane (the count would be wrong)
 */
export async function recordLanes(client: FlowfleetClient): Promise<string[]> {
  const lanes = new Set<string>();
  for (const sampler of ['sde', 'ode'] as const) {
    for (const [i, constraints] of CONSTRAINTS.entries()) {
      const job = await client.enqueueRollouts({
        model: 'wan21-mini',
        prompt: `scale lane ${sampler} ${i}`,
        seeds: [1],
        steps: 2,
        sampler,
        constraints,
        waitForCapacity: true,
      });
      lanes.add(job.lane);
    }
  }
  if (lanes.size !== SCALE_LANES)
    throw new Error(`expected ${SCALE_LANES} lanes, got ${lanes.size}`);
  return [...lanes];
}
