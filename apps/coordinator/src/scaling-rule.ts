// The autoscaling rule: a pure function from per-class facts and per-lane backlog to a replica
// count per device class. Documented in apps/coordinator/README.md ("Scaling"); every clause has a
// unit test beside this file.

/** What the rule knows about one device class. */
export interface ClassFacts {
  readonly deviceClass: string;
  /** Live workers of the class. */
  readonly workers: number;
  /** Their rollout slots (sum of concurrency). */
  readonly capacity: number;
  /** Rollouts running on them now. */
  readonly busy: number;
  /** Live workers with at least one rollout in hand. */
  readonly busyWorkers: number;
  /** Jobs one replica is sized for (≥ 1). */
  readonly jobsPerReplica: number;
  readonly minReplicas: number;
  /** ≥ 1 and ≥ minReplicas. */
  readonly maxReplicas: number;
}

/** One lane's waiting jobs and the known classes that can serve it. */
export interface LaneDemand {
  readonly lane: string;
  /** waiting + prioritized + delayed. */
  readonly backlog: number;
  /** Device classes with a manifest (or platform) that satisfies the lane. */
  readonly classes: readonly string[];
}

/** The rule's answer for one class. */
export interface ClassPlan extends ClassFacts {
  readonly exclusiveBacklog: number;
  readonly sharedBacklog: number;
  /** The part of the shared backlog counted for this class. */
  readonly sharedAssigned: number;
  readonly desiredReplicas: number;
}

/** The rule's answer for the fleet. */
export interface ScalingPlan {
  readonly classes: readonly ClassPlan[];
  /** Jobs on lanes no known class can serve. */
  readonly unservedBacklog: number;
}

/** One line naming the rule (served as `rule` by `GET /v1/scaling`). */
export const SCALING_RULE =
  'desiredReplicas = clamp(ceil((busy + exclusiveBacklog + sharedAssigned) / jobsPerReplica), ' +
  'max(minReplicas, busyWorkers, 1 if busy + exclusiveBacklog > 0), maxReplicas); a shared ' +
  "lane's backlog fills the serving classes' live capacity first, then their room up to maxReplicas";

/** Shares are fractions; 3 × (1/3) must not ceil to 2. */
const EPSILON = 1e-9;

function ceilJobs(value: number): number {
  return Math.max(0, Math.ceil(value - EPSILON));
}

/**
 * Splits `amount` over `classes` in proportion to `weight`, each capped at its `room`; returns
 * what is left when every class with weight is full.
 */
function fill(
  amount: number,
  classes: readonly string[],
  weight: (deviceClass: string) => number,
  room: Map<string, number>,
  assigned: Map<string, number>,
): number {
  let left = amount;
  // Each pass fills at least one class to its room or places everything: ≤ |classes| passes.
  for (let pass = 0; pass < classes.length && left > EPSILON; pass++) {
    const open = classes.filter((c) => (room.get(c) ?? 0) > EPSILON && weight(c) > 0);
    const total = open.reduce((sum, c) => sum + weight(c), 0);
    if (total <= 0) break;
    let placed = 0;
    for (const c of open) {
      const give = Math.min((left * weight(c)) / total, room.get(c) ?? 0);
      room.set(c, (room.get(c) ?? 0) - give);
      assigned.set(c, (assigned.get(c) ?? 0) + give);
      placed += give;
    }
    left -= placed;
  }
  return Math.max(0, left);
}

/**
 * The replica count each device class should run.
 * - exclusiveBacklog: jobs on lanes exactly one known class can serve.
 * - sharedBacklog: jobs on lanes several known classes can serve (the whole lane counts for each);
 *   `sharedAssigned` is the part counted for this class. Lanes are taken in name order; each
 *   lane's backlog goes first to the serving classes with live capacity, in proportion to it
 *   (work-stealing workers drain a shared queue at their concurrency), each up to its room
 *   (`maxReplicas × jobsPerReplica − busy − exclusiveBacklog − already assigned`); what is left
 *   goes to the classes with room in proportion to it (so a class at zero scales up when the live
 *   ones are full or absent); what is left after that (every class at its maximum) is split
 *   evenly, where the clamp caps it.
 * - desiredReplicas: ceil of (busy + exclusiveBacklog + sharedAssigned) / jobsPerReplica, never
 *   below minReplicas, never below the number of busy workers (scale-down never asks for fewer
 *   replicas than workers with a job in hand), never 0 while a job runs or an exclusive job
 *   waits, never above maxReplicas.
 * Lanes naming no known class count as `unservedBacklog`.
 */
export function planScaling(
  classes: readonly ClassFacts[],
  lanes: readonly LaneDemand[],
): ScalingPlan {
  const known = new Map(classes.map((facts) => [facts.deviceClass, facts]));
  const exclusive = new Map<string, number>();
  const shared = new Map<string, number>();
  const assigned = new Map<string, number>();
  let unservedBacklog = 0;
  const sharedLanes: { backlog: number; classes: string[] }[] = [];
  for (const lane of [...lanes].sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0))) {
    if (lane.backlog <= 0) continue;
    const serving = [...new Set(lane.classes)].filter((c) => known.has(c)).sort();
    if (serving.length === 0) unservedBacklog += lane.backlog;
    else if (serving.length === 1) {
      const only = serving[0] as string;
      exclusive.set(only, (exclusive.get(only) ?? 0) + lane.backlog);
    } else {
      for (const c of serving) shared.set(c, (shared.get(c) ?? 0) + lane.backlog);
      sharedLanes.push({ backlog: lane.backlog, classes: serving });
    }
  }
  const room = new Map<string, number>();
  for (const facts of classes) {
    const own = facts.busy + (exclusive.get(facts.deviceClass) ?? 0);
    room.set(facts.deviceClass, Math.max(0, facts.maxReplicas * facts.jobsPerReplica - own));
  }
  const capacityOf = (c: string): number => known.get(c)?.capacity ?? 0;
  const roomOf = (c: string): number => room.get(c) ?? 0;
  for (const lane of sharedLanes) {
    let left = fill(lane.backlog, lane.classes, capacityOf, room, assigned);
    if (left > EPSILON) left = fill(left, lane.classes, roomOf, room, assigned);
    if (left > EPSILON) {
      for (const c of lane.classes) {
        assigned.set(c, (assigned.get(c) ?? 0) + left / lane.classes.length);
      }
    }
  }
  const plans = classes.map((facts): ClassPlan => {
    const exclusiveBacklog = exclusive.get(facts.deviceClass) ?? 0;
    const sharedAssigned = assigned.get(facts.deviceClass) ?? 0;
    const demand = facts.busy + exclusiveBacklog + sharedAssigned;
    const needed = ceilJobs(demand / facts.jobsPerReplica);
    const floor = Math.max(
      facts.minReplicas,
      facts.busyWorkers,
      facts.busy + exclusiveBacklog > 0 ? 1 : 0,
    );
    return {
      ...facts,
      exclusiveBacklog,
      sharedBacklog: shared.get(facts.deviceClass) ?? 0,
      sharedAssigned,
      desiredReplicas: Math.min(facts.maxReplicas, Math.max(floor, needed)),
    };
  });
  return { classes: plans, unservedBacklog };
}
