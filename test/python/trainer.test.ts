// The standard-library Python trainer (examples/python/trainer.py) against a live local fleet:
// it enqueues, waits, downloads the result, parses the safetensors header and reads `log_probs`
// with struct — and what it prints matches the coordinator's summary of the same job.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startLocalFleet, type LocalFleet } from '@flowfleet/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TRAINER = fileURLToPath(new URL('../../examples/python/trainer.py', import.meta.url));

function python(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn('python3', [TRAINER, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let fleet: LocalFleet;

beforeAll(async () => {
  fleet = await startLocalFleet({ workers: 1, logLevel: 'warn' });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
});

describe('examples/python/trainer.py', () => {
  it(
    'runs a rollout and reads log_probs from the result safetensors',
    { timeout: 60_000 },
    async () => {
      const run = await python([
        '--url',
        fleet.url,
        '--token',
        fleet.tokens.trainer,
        '--seeds',
        '3,5',
        '--steps',
        '3',
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/completed step 3\/3 on w1/);
      expect(run.stdout).toMatch(/log_probs\s+F64\s+\[3, 2\]/);
      expect(run.stdout).toMatch(/latents\s+F32\s+\[4, 2, \d+, 1, 8, 8\]/);

      const id = /enqueued (\S+)/.exec(run.stdout)?.[1];
      expect(id).toBeDefined();
      const summary = (await fleet.client().status(id!)).summary!;
      for (const [sample, seed] of [3, 5].entries()) {
        const printed = new RegExp(
          `seed ${seed}: sum (-?\\d+\\.\\d+)  per step ((?:-?\\d+\\.\\d+ ?){3})`,
        ).exec(run.stdout);
        expect(printed, run.stdout).not.toBeNull();
        // The summary's logProbs is [T][G] (step-major, as the file's log_probs).
        const row = summary.logProbs!.map((step) => step[sample]!);
        expect(Number(printed![1])).toBeCloseTo(
          row.reduce((a, b) => a + b, 0),
          5,
        );
        expect(printed![2]!.trim().split(' ').map(Number)).toEqual(
          row.map((v) => Number(v.toFixed(6))),
        );
      }
    },
  );

  it('reads URL and token from the environment and exits 1 on a refused token', async () => {
    const run = await python(['--steps', '1'], {
      FLOWFLEET_URL: fleet.url,
      FLOWFLEET_TOKEN: 'not-a-valid-token-at-all',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: API_UNAUTHORIZED/);
  });
});
