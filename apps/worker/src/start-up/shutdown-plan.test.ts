import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ShutdownPlan, step } from './shutdown-plan.js';

describe('ShutdownPlan', () => {
  it('undoes the last phase first, runs every step even when one fails, and runs each once', async () => {
    const ran: string[] = [];
    const plan = new ShutdownPlan();
    const first = plan.add({ id: 1, shutdown: [step('redis', async () => ran.push('redis'))] });
    expect(first.id).toBe(1);
    plan.add({
      shutdown: [
        step('stop fetching', async () => ran.push('stop fetching')),
        step('drain', () => Promise.reject(new Error('drain failed'))),
        step('after drain', async () => ran.push('after drain')),
      ],
    });
    const failures: unknown[] = [];
    const logger = pino(
      { level: 'error' },
      { write: (line: string) => failures.push(JSON.parse(line)) },
    );
    await plan.run(logger);
    expect(ran).toEqual(['stop fetching', 'after drain', 'redis']);
    expect(failures).toMatchObject([{ step: 'drain', msg: 'shutdown step failed' }]);
    await plan.run(logger);
    expect(ran).toHaveLength(3);
  });
});
