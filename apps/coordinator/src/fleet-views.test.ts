import {
  FleetSchema,
  type LaneSpec,
  type ManifestRow,
  type WorkerManifest,
} from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import type { WorkerView } from './fleet-reader.js';
import {
  capabilityMatrix,
  eligibleWorkerViews,
  fleetDigest,
  laneCapacities,
  summarizeWorkers,
} from './fleet-views.js';

const row = (op: string, device: string, arch: string, available = true): ManifestRow => ({
  registry: 'kernels',
  key: { op, device, arch, variant: 'default' },
  available,
  source: 'test',
  meta: {},
});

function worker(
  workerId: string,
  alive: boolean,
  kernels: ManifestRow[],
  concurrency = 1,
): WorkerView {
  const manifest: WorkerManifest = {
    workerId,
    host: 'h',
    pid: 1,
    platform: { device: 'cpu', arch: 'x86-64-v2', features: [] },
    kernels,
    components: [],
    models: ['wan21-mini'],
    concurrency,
    weights: {},
    startedAt: '2026-11-30T00:00:00.000Z',
    version: '0.1.0',
  };
  return {
    workerId,
    alive,
    manifest,
    ...(alive
      ? { heartbeat: { workerId, at: '2026-11-30T00:00:01.000Z', activeJobs: 1, lanes: [] } }
      : {}),
  };
}

const workers = [
  worker(
    'a',
    true,
    [row('flow_sde_step', 'cpu', 'generic'), row('cfg_combine', 'cpu', 'generic')],
    3,
  ),
  worker(
    'b',
    true,
    [row('flow_sde_step', 'cpu', 'generic'), row('cfg_combine', 'cpu', 'generic', false)],
    5,
  ),
  worker(
    'c',
    false,
    [row('flow_sde_step', 'cpu', 'generic'), row('cfg_combine', 'cpu', 'generic')],
    7,
  ),
];

describe('fleet views', () => {
  it('counts live workers with each cell available; dead workers do not count', () => {
    const cells = capabilityMatrix(workers);
    expect(cells).toEqual([
      {
        registry: 'kernel',
        name: 'cfg_combine',
        device: 'cpu',
        arch: 'generic',
        variant: 'default',
        liveWorkers: 1,
      },
      {
        registry: 'kernel',
        name: 'flow_sde_step',
        device: 'cpu',
        arch: 'generic',
        variant: 'default',
        liveWorkers: 2,
      },
    ]);
  });

  it('computes lane capacity from the live workers that satisfy it', () => {
    const lane: LaneSpec = {
      lane: 'lane-0000000000000000',
      requirements: {
        model: 'wan21-mini',
        ops: ['cfg_combine', 'flow_sde_step'],
        components: ['dit', 'text_encoder'],
        devices: ['cpu'],
        minArch: {},
        dtype: 'float32',
      },
      createdAt: '2026-11-30T00:00:00.000Z',
    };
    const counts = { waiting: 2, delayed: 1, prioritized: 0, active: 1, completed: 0, failed: 0 };
    const [capacity] = laneCapacities([lane], new Map([[lane.lane, counts]]), workers);
    expect(capacity).toMatchObject({ backlog: 3, eligibleWorkers: 1, capacity: 3 });
    const ids = eligibleWorkerViews(workers, lane.lane, lane.requirements);
    expect(ids.map((view) => view.workerId)).toEqual(['a']);
  });

  it('judges workers of equal capability together; the lane filter lists them in fleet order', () => {
    const cuda = (id: string, concurrency: number): WorkerView => {
      const view = worker(id, true, [row('flow_sde_step', 'cuda', 'sm90')], concurrency);
      return {
        ...view,
        manifest: {
          ...view.manifest,
          platform: { device: 'cuda', arch: 'sm90', features: [], cpuArch: 'x86-64-v3' },
        },
      };
    };
    const cpuOnly = (id: string) => worker(id, true, [row('flow_sde_step', 'cpu', 'generic')], 1);
    const fleet = [cuda('g1', 4), cpuOnly('p1'), cuda('g2', 8), cpuOnly('p2'), cuda('g3', 2)];
    const lane = (n: number, devices: ('cpu' | 'cuda')[], minArch = {}): LaneSpec => ({
      lane: `lane-${String(n).padStart(16, '0')}`,
      requirements: {
        model: 'wan21-mini',
        ops: ['flow_sde_step'],
        components: [],
        devices,
        minArch,
        dtype: 'float32',
      },
      createdAt: '2026-11-30T00:00:00.000Z',
    });
    const [gpu, any, sm90] = laneCapacities(
      [lane(1, ['cuda']), lane(2, ['cuda', 'cpu']), lane(3, ['cuda'], { cuda: 'sm90' })],
      new Map(),
      fleet,
    );
    expect(gpu).toMatchObject({ eligibleWorkers: 3, capacity: 14 });
    expect(any).toMatchObject({ eligibleWorkers: 5, capacity: 16 });
    expect(sm90).toMatchObject({ eligibleWorkers: 3, capacity: 14 });
    const idsOf = (spec: LaneSpec) =>
      eligibleWorkerViews(fleet, spec.lane, spec.requirements).map((view) => view.workerId);
    expect(idsOf(lane(1, ['cuda']))).toEqual(['g1', 'g2', 'g3']);
    expect(idsOf(lane(2, ['cuda', 'cpu']))).toEqual(['g1', 'p1', 'g2', 'p2', 'g3']);
    expect(fleetDigest(fleet).groupOf).toEqual([0, 1, 0, 1, 0]);
  });

  it('derives the views once per read: the same array answers the same digest and cells', () => {
    const read = [...workers];
    const digest = fleetDigest(read);
    expect(fleetDigest(read)).toBe(digest);
    expect(capabilityMatrix(read)).toBe(digest.cells);
    expect(digest.liveWorkers).toBe(2);
    const spec = {
      model: 'wan21-mini',
      ops: ['flow_sde_step'],
      components: [],
      devices: ['cpu' as const],
      minArch: {},
      dtype: 'float32' as const,
    };
    expect(digest.eligibility('lane-0000000000000009', spec)).toBe(
      digest.eligibility('lane-0000000000000009', spec),
    );
    // A new read (a new array, a worker gone) is a new digest with its own counts.
    const next = read.filter((view) => view.workerId !== 'a');
    expect(fleetDigest(next)).not.toBe(digest);
    expect(fleetDigest(next).eligibility('lane-0000000000000009', spec).eligibleWorkers).toBe(1);
    expect(capabilityMatrix(next).map((cell) => cell.liveWorkers)).toEqual([0, 1]);
  });

  it('counts a worker once per cell when its manifest lists the cell twice', () => {
    const twice = worker('d', true, [
      row('flow_sde_step', 'cpu', 'generic', false),
      row('flow_sde_step', 'cpu', 'generic'),
      row('flow_sde_step', 'cpu', 'generic'),
    ]);
    const same = { ...twice, workerId: 'e' };
    expect(capabilityMatrix([twice, same]).map((cell) => cell.liveWorkers)).toEqual([2]);
  });

  it('summarizes load from the heartbeat and zero for dead workers', () => {
    const summary = summarizeWorkers(workers);
    expect(summary.map((w) => [w.workerId, w.alive, w.activeJobs])).toEqual([
      ['a', true, 1],
      ['b', true, 1],
      ['c', false, 0],
    ]);
    expect(summary[1]?.kernels).toEqual({ available: 1, declared: 2 });
  });

  it('shows the peer URL a worker advertises, and none for a worker without a peer server', () => {
    const [withPeer, withoutPeer] = workers;
    const peerUrl = 'http://127.0.0.1:40123';
    const summary = summarizeWorkers([
      { ...withPeer!, manifest: { ...withPeer!.manifest, peerUrl } },
      withoutPeer!,
    ]);
    expect(summary[0]?.peerUrl).toBe(peerUrl);
    expect(FleetSchema.parse({ live: 2, dead: 0, workers: summary }).workers[0]?.peerUrl).toBe(
      peerUrl,
    );
    expect(summary[1]).not.toHaveProperty('peerUrl');
  });
});
