import { describe, expect, it } from 'vitest';
import { planScaling, type ClassFacts, type LaneDemand } from './scaling-rule.js';

function facts(deviceClass: string, overrides: Partial<ClassFacts> = {}): ClassFacts {
  return {
    deviceClass,
    workers: 0,
    capacity: 0,
    busy: 0,
    busyWorkers: 0,
    jobsPerReplica: 2,
    minReplicas: 0,
    maxReplicas: 32,
    ...overrides,
  };
}

function lane(name: string, backlog: number, classes: string[]): LaneDemand {
  return { lane: name, backlog, classes };
}

function plan(classes: ClassFacts[], lanes: LaneDemand[]) {
  const result = planScaling(classes, lanes);
  return {
    unserved: result.unservedBacklog,
    byClass: new Map(result.classes.map((c) => [c.deviceClass, c])),
  };
}

const A = 'cuda/sm90';
const B = 'cuda/sm80';

describe('planScaling', () => {
  it('sizes a class for its exclusive backlog plus running jobs at jobsPerReplica', () => {
    const { byClass } = plan(
      [facts(A, { workers: 1, capacity: 2, busy: 2, busyWorkers: 1 })],
      [lane('l1', 5, [A])],
    );
    // (2 running + 5 waiting) / 2 per replica = 3.5 → 4.
    expect(byClass.get(A)).toMatchObject({
      exclusiveBacklog: 5,
      sharedBacklog: 0,
      sharedAssigned: 0,
      desiredReplicas: 4,
    });
  });

  it('scales an idle class with no backlog to minReplicas, and to zero by default', () => {
    const { byClass } = plan(
      [
        facts(A, { workers: 3, capacity: 6 }),
        facts(B, { workers: 1, capacity: 2, minReplicas: 1 }),
      ],
      [lane('l1', 0, [A])],
    );
    expect(byClass.get(A)?.desiredReplicas).toBe(0);
    expect(byClass.get(B)?.desiredReplicas).toBe(1);
  });

  it('never scales below the busy workers, and never to zero while a job runs', () => {
    const { byClass } = plan(
      [
        facts(A, { workers: 4, capacity: 16, busy: 4, busyWorkers: 4, jobsPerReplica: 4 }),
        facts(B, { workers: 1, capacity: 8, busy: 1, busyWorkers: 1, jobsPerReplica: 8 }),
      ],
      [],
    );
    // ceil(4 / 4) = 1, but four workers each hold a job.
    expect(byClass.get(A)?.desiredReplicas).toBe(4);
    expect(byClass.get(B)?.desiredReplicas).toBe(1);
  });

  it('scales a class from zero for an exclusive job even with a huge jobsPerReplica', () => {
    const { byClass } = plan([facts(A, { jobsPerReplica: 1000 })], [lane('l1', 1, [A])]);
    expect(byClass.get(A)?.desiredReplicas).toBe(1);
  });

  it('caps at maxReplicas (which wins over the busy-worker floor)', () => {
    const { byClass } = plan(
      [
        facts(A, {
          workers: 5,
          capacity: 5,
          busy: 5,
          busyWorkers: 5,
          jobsPerReplica: 1,
          maxReplicas: 3,
        }),
      ],
      [lane('l1', 100, [A])],
    );
    expect(byClass.get(A)?.desiredReplicas).toBe(3);
  });

  it('splits a shared lane by live capacity, so the larger class is counted more of it', () => {
    const { byClass } = plan(
      [facts(A, { workers: 3, capacity: 6 }), facts(B, { workers: 1, capacity: 2 })],
      [lane('shared', 8, [A, B])],
    );
    expect(byClass.get(A)).toMatchObject({
      sharedBacklog: 8,
      sharedAssigned: 6,
      exclusiveBacklog: 0,
    });
    expect(byClass.get(B)).toMatchObject({ sharedBacklog: 8, sharedAssigned: 2 });
    expect(byClass.get(A)?.desiredReplicas).toBe(3);
    expect(byClass.get(B)?.desiredReplicas).toBe(1);
  });

  it('gives a shared lane to the class at zero only once the live class is full', () => {
    const live = facts(A, { workers: 2, capacity: 4, maxReplicas: 2 });
    const idle = facts(B);
    const small = plan([live, idle], [lane('shared', 3, [A, B])]).byClass;
    expect(small.get(A)?.sharedAssigned).toBe(3);
    expect(small.get(B)?.desiredReplicas).toBe(0);
    // A can hold 2 × 2 = 4 jobs at its maximum; the other 6 go to B.
    const large = plan([live, idle], [lane('shared', 10, [A, B])]).byClass;
    expect(large.get(A)).toMatchObject({ sharedAssigned: 4, desiredReplicas: 2 });
    expect(large.get(B)).toMatchObject({ sharedAssigned: 6, desiredReplicas: 3 });
  });

  it('splits a shared lane by room when no serving class has live capacity', () => {
    const { byClass } = plan(
      [facts(A, { maxReplicas: 30 }), facts(B, { maxReplicas: 10 })],
      [lane('shared', 8, [A, B])],
    );
    expect(byClass.get(A)?.sharedAssigned).toBeCloseTo(6, 9);
    expect(byClass.get(B)?.sharedAssigned).toBeCloseTo(2, 9);
    expect(byClass.get(A)?.desiredReplicas).toBe(3);
    expect(byClass.get(B)?.desiredReplicas).toBe(1);
  });

  it('does not round a share that sums to a whole number up past it', () => {
    const { byClass } = plan(
      [facts(A, { capacity: 1, jobsPerReplica: 1 }), facts(B, { capacity: 2, jobsPerReplica: 1 })],
      [lane('l1', 1, [A, B]), lane('l2', 7, [A, B]), lane('l3', 1, [A, B])],
    );
    // A is counted 1/3 + 7/3 + 1/3 = 3 jobs, which float64 sums to 3.0000000000000004.
    expect(byClass.get(A)?.desiredReplicas).toBe(3);
    expect(byClass.get(B)?.desiredReplicas).toBe(6);
  });

  it('counts room already taken by exclusive work before giving a shared lane', () => {
    const { byClass } = plan(
      [facts(A, { workers: 1, capacity: 2, maxReplicas: 2 }), facts(B)],
      [lane('a-only', 3, [A]), lane('shared', 4, [A, B])],
    );
    // A's room: 2 × 2 − 3 exclusive = 1; the other 3 shared jobs go to B.
    expect(byClass.get(A)).toMatchObject({
      exclusiveBacklog: 3,
      sharedAssigned: 1,
      desiredReplicas: 2,
    });
    expect(byClass.get(B)).toMatchObject({ sharedAssigned: 3, desiredReplicas: 2 });
  });

  it('splits what no class has room for evenly (the clamp caps it)', () => {
    const { byClass } = plan(
      [
        facts(A, { maxReplicas: 1, jobsPerReplica: 1 }),
        facts(B, { maxReplicas: 1, jobsPerReplica: 1 }),
      ],
      [lane('shared', 10, [A, B])],
    );
    expect(byClass.get(A)).toMatchObject({ sharedAssigned: 5, desiredReplicas: 1 });
    expect(byClass.get(B)).toMatchObject({ sharedAssigned: 5, desiredReplicas: 1 });
  });

  it('counts lanes no known class serves as unserved, and ignores unknown class names', () => {
    const { byClass, unserved } = plan(
      [facts(A)],
      [lane('nobody', 4, []), lane('ghost', 3, ['cpu/x86-64-v4']), lane('a', 1, [A, 'cpu/ghost'])],
    );
    expect(unserved).toBe(7);
    // 'cpu/ghost' is not a known class, so lane 'a' is A's alone.
    expect(byClass.get(A)).toMatchObject({ exclusiveBacklog: 1, sharedBacklog: 0 });
  });
});
