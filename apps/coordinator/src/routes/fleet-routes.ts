import { FlowfleetError } from '@flowfleet/errors';
import { FleetSchema, LanesSchema, MatrixSchema, ScalingSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { FleetQuerySchema, ScalingQuerySchema } from '../api-schemas.js';
import {
  capabilityMatrix,
  eligibleWorkerViews,
  fleetDigest,
  laneCapacities,
  summarizeWorkers,
} from '../fleet-views.js';
import type { LaneCounts } from '../lane-queues.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';

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
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/fleet', {
    schema: { querystring: FleetQuerySchema, response: { 200: FleetSchema } },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'Every registered worker: platform, versions, load, alive or dead (query: lane — only the live workers that can serve it)',
        errors: ['API_LANE_NOT_FOUND'],
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const requested = request.query.lane;
      const views = await services.fleet.workers();
      if (requested === undefined) {
        const workers = summarizeWorkers(views);
        const live = fleetDigest(views).liveWorkers;
        return { live, dead: workers.length - live, workers };
      }
      const spec = (await services.lanes.list()).find((lane) => lane.lane === requested);
      if (spec === undefined) {
        throw new FlowfleetError(
          'API_LANE_NOT_FOUND',
          `lane '${requested}' is not recorded (GET /v1/lanes lists the lanes)`,
          { details: { lane: requested } },
        );
      }
      const workers = summarizeWorkers(eligibleWorkerViews(views, spec.lane, spec.requirements));
      return { live: workers.length, dead: 0, workers };
    },
  });

  api.get('/v1/fleet/matrix', {
    schema: { response: { 200: MatrixSchema } },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'Capability matrix: live workers per (op or component kind) × (device, arch, variant), plus lane backlog and capacity',
        usesRedis: true,
      },
    },
    handler: async () => {
      const { workers, lanes } = await readLaneCapacities(services);
      return {
        liveWorkers: fleetDigest(workers).liveWorkers,
        cells: capabilityMatrix(workers),
        lanes,
      };
    },
  });

  api.get('/v1/lanes', {
    schema: { response: { 200: LanesSchema } },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: 'Every recorded lane: requirements, queue counts, eligible live workers, capacity',
        usesRedis: true,
      },
    },
    handler: async () => ({ lanes: (await readLaneCapacities(services)).lanes }),
  });

  api.get('/v1/scaling', {
    schema: { querystring: ScalingQuerySchema, response: { 200: ScalingSchema } },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'Scaling hints per device class: live workers, capacity, busy slots, exclusive and shared backlog, desiredReplicas and the rule (query: deviceClass, percent-encoded)',
        errors: ['API_DEVICE_CLASS_NOT_FOUND'],
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const { workers, lanes } = await readLaneCapacities(services);
      const scaling = await services.scaling.plan(workers, lanes);
      const requested = request.query.deviceClass;
      if (requested === undefined) return scaling;
      const classes = scaling.classes.filter((entry) => entry.deviceClass === requested);
      if (classes.length === 0) {
        const known = scaling.classes.map((entry) => entry.deviceClass);
        throw new FlowfleetError(
          'API_DEVICE_CLASS_NOT_FOUND',
          `device class '${requested}' is not known (no live worker, no remembered manifest, not in FLOWFLEET_SCALING_CLASSES)`,
          { details: { deviceClass: requested, known } },
        );
      }
      return { ...scaling, classes };
    },
  });
}
