import { FleetSchema, LanesSchema, MatrixSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { capabilityMatrix, laneCapacities, summarizeWorkers } from '../fleet-views.js';
import type { LaneCounts } from '../lane-queues.js';
import type { CoordinatorServices } from '../services.js';

/** Lane capacities with fresh queue counts (shared by the matrix, the lanes list and metrics). */
export async function readLaneCapacities(services: CoordinatorServices) {
  const [lanes, workers] = await Promise.all([services.lanes.list(), services.fleet.workers()]);
  const counts = new Map<string, LaneCounts>();
  await Promise.all(
    lanes.map(async (spec) => counts.set(spec.lane, await services.queues.counts(spec.lane))),
  );
  return { workers, counts, lanes: laneCapacities(lanes, counts, workers) };
}

/** Read-only views of the fleet: workers, the capability matrix, lanes. */
export function registerFleetRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  app.get('/v1/fleet', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: 'Every registered worker: platform, versions, load, alive or dead',
        response: { status: 200, body: FleetSchema },
      },
    },
    handler: async () => {
      const workers = summarizeWorkers(await services.fleet.workers());
      const live = workers.filter((worker) => worker.alive).length;
      return { live, dead: workers.length - live, workers };
    },
  });

  app.get('/v1/fleet/matrix', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'Capability matrix: live workers per (op or component kind) × (device, arch, variant), plus lane backlog and capacity',
        response: { status: 200, body: MatrixSchema },
      },
    },
    handler: async () => {
      const { workers, lanes } = await readLaneCapacities(services);
      return {
        liveWorkers: workers.filter((worker) => worker.alive).length,
        cells: capabilityMatrix(workers),
        lanes,
      };
    },
  });

  app.get('/v1/lanes', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: 'Every recorded lane: requirements, queue counts, eligible live workers, capacity',
        response: { status: 200, body: LanesSchema },
      },
    },
    handler: async () => ({ lanes: (await readLaneCapacities(services)).lanes }),
  });
}
