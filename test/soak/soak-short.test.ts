// The short soak (the CI version of `npm run soak`): 90 s of rollouts with a weight sync every
// 5 s and a worker SIGKILLed every 15 s, under 15 s retention. Nothing is lost, duplicated or
// mismatched, and once retention has kicked in the blob store and Redis's key count stay under
// bounds that a fleet without retention passes within the run (checked by hand: with
// `--retention 100000 --versions-kept 1000` both bounds fail).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Series {
  atSteadyStart: number;
  steadyMax: number;
  slopePerMinute: number;
}
interface SoakFigures {
  accepted: number;
  completed: number;
  lost: number;
  duplicated: number;
  mismatched: number;
  workerKills: number;
  weightSyncs: number;
  weightVersionBytes: number;
  steadyFromS: number;
  series: Record<string, Series>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowfleet-soak-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function runSoak(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@flowfleet/source',
        '--import',
        'tsx',
        'bench/soak.ts',
        '--minutes',
        '1.5',
        '--kill-every',
        '15',
        '--sync-every',
        '5',
        '--retention',
        '15',
        '--out',
        out,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('the short soak', () => {
  it('loses, duplicates and mismatches nothing; blob bytes and Redis keys stop growing', async () => {
    const out = join(dir, 'soak.json');
    const { code, output } = await runSoak(out);
    expect(code, output).toBe(0);
    const { figures, samples } = JSON.parse(await readFile(out, 'utf8')) as {
      figures: SoakFigures;
      samples: { t: number; values: Record<string, number> }[];
    };
    console.log(output.split('\n').slice(-16).join('\n'));
    expect(figures.accepted).toBeGreaterThan(20);
    expect(figures.workerKills).toBeGreaterThanOrEqual(3);
    expect(figures.weightSyncs).toBeGreaterThanOrEqual(8);
    expect({
      lost: figures.lost,
      duplicated: figures.duplicated,
      mismatched: figures.mismatched,
      completed: figures.completed,
    }).toEqual({ lost: 0, duplicated: 0, mismatched: 0, completed: figures.accepted });

    // Blob store: 2 versions kept + those in the 5 s grace + those workers lagging under load still
    // hold (3–7 seen), with room for the small result files; without retention every one of the
    // versions stays (13–18 per run here).
    const blobs = figures.series['blobStore.bytes']!;
    expect(blobs.steadyMax).toBeLessThanOrEqual(9 * figures.weightVersionBytes);
    // Redis keys: the fixed layout plus about one hash per job finished inside the retention
    // window (15 s + two sweeps + slack), sample by sample; without retention every job's hash
    // stays and the count passes this bound before the run ends.
    const windowS = 15 + 2 * 3 + 5;
    const steady = samples.filter((sample) => sample.t >= figures.steadyFromS);
    expect(steady.length).toBeGreaterThanOrEqual(5);
    for (const sample of steady) {
      const before = samples.filter((earlier) => earlier.t <= sample.t - windowS).at(-1);
      const recentJobs = sample.values['jobs.completed']! - (before?.values['jobs.completed'] ?? 0);
      expect(sample.values['redis.keys']!, `at ${sample.t} s`).toBeLessThanOrEqual(
        60 + 2 * recentJobs,
      );
    }
  }, 480_000);
});
