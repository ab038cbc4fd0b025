// Reading V8 CPU profiles (`node --cpu-prof`, one file per thread) as timed samples, and naming
// what a sample was doing by the first frame of its stack that belongs to a known part.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface RawProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One sample: when (µs, CLOCK_MONOTONIC, as `process.hrtime`), for how long, and what. */
export interface Sample {
  readonly at: number;
  readonly us: number;
  readonly cause: string;
}

/** One thread's samples, in time order. */
export interface ThreadProfile {
  readonly file: string;
  /** Node's thread index in the file name (0: the main thread). */
  readonly thread: number;
  readonly samples: readonly Sample[];
}

/** What the ONNX Runtime binding's blocking `session.run` shows as (the setImmediate callback). */
export const SESSION_RUN = 'ORT session.run';
export const IDLE = 'idle';

// Ordered: the first rule that matches a frame (walking from the leaf up) names the sample.
const RULES: readonly (readonly [RegExp, string])[] = [
  [/onnxruntime-node\/dist\/backend\.js$/, SESSION_RUN],
  [/onnxruntime-(node|common)\//, 'ORT binding: tensor wrap/unwrap'],
  [/packages\/numerics\//, 'solver + noise (numerics)'],
  [
    /packages\/(platform\/src\/worker-threads|backends\/src\/ort)\//,
    'thread pool: messages, copies',
  ],
  [
    /packages\/runtime\/src\/rollout-file|packages\/models\/src\/safetensors|apps\/worker\/src\/rollout-output/,
    'result encoding (safetensors, summary)',
  ],
  [/packages\/runtime\//, 'runtime loop (capture, workspace, keys)'],
  [/node_modules\/zod\//, 'validation (zod)'],
  [/node_modules\/(pino|sonic-boom|@pinojs|thread-stream)/, 'logging (pino)'],
  [
    /node_modules\/(bullmq|ioredis|@ioredis|redis-parser|cluster-key-slot|msgpackr)/,
    'Redis / BullMQ',
  ],
  [
    /packages\/(protocol\/src\/http-exchange|client\/)|apps\/worker\/src\/(coordinator-client|retry)|node_modules\/undici/,
    'HTTP client (result upload)',
  ],
  [/packages\/models\//, 'model card (tokenizer, …)'],
  [/apps\/worker\//, 'worker job glue'],
  [/packages\/protocol\//, 'protocol (schemas, keys)'],
  [/\/bench\//, 'raw loop glue'],
];

function causeOf(stack: readonly CallFrame[]): string {
  const leaf = stack[0];
  if (leaf?.functionName === '(idle)') return IDLE;
  if (leaf?.functionName === '(garbage collector)') return 'GC';
  if (leaf?.functionName === '(program)') return 'V8 / native (program)';
  for (const frame of stack) {
    for (const [pattern, cause] of RULES) if (pattern.test(frame.url)) return cause;
  }
  return 'node internals (other)';
}

/** Reads one profile file into samples. */
export function readThreadProfile(file: string): ThreadProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as RawProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const causes = new Map<number, string>();
  const cause = (id: number): string => {
    let known = causes.get(id);
    if (known === undefined) {
      const stack: CallFrame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        stack.push(byId.get(at)!.callFrame);
      }
      causes.set(id, (known = causeOf(stack)));
    }
    return known;
  };
  const samples: Sample[] = [];
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  for (let i = 0; i < profile.samples.length - 1; i++) {
    samples.push({
      at: times[i]!,
      us: times[i + 1]! - times[i]!,
      cause: cause(profile.samples[i]!),
    });
  }
  const thread = Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[1] ?? -1);
  return { file, thread, samples };
}

/** Every thread profile in `dir`. */
export function readProfiles(dir: string): ThreadProfile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => readThreadProfile(join(dir, name)));
}

/** The thread that spent the most time in `session.run`. */
export function ortThread(threads: readonly ThreadProfile[]): ThreadProfile {
  const runUs = (t: ThreadProfile) =>
    t.samples.reduce((sum, s) => sum + (s.cause === SESSION_RUN ? s.us : 0), 0);
  return [...threads].sort((a, b) => runUs(b) - runUs(a))[0]!;
}

/** The cause of `thread` at time `at` (the sample covering it), or IDLE outside its samples. */
export function causeAt(thread: ThreadProfile, at: number): string {
  const { samples } = thread;
  let lo = 0;
  let hi = samples.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (samples[mid]!.at <= at) lo = mid;
    else hi = mid - 1;
  }
  const sample = samples[lo];
  return sample !== undefined && sample.at <= at && at < sample.at + sample.us
    ? sample.cause
    : IDLE;
}
