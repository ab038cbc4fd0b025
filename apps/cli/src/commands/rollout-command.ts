import { writeFile } from 'node:fs/promises';
import type { RolloutRequestInput, WeightRequirements } from '@flowfleet/protocol';
import { InvalidArgumentError, type Command } from 'commander';
import { integerIn, numberIn, oneOf, parseSeeds, parseSha256 } from '../cli-args.js';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { shortId } from '../format/numbers.js';
import { ProgressBoard } from '../format/progress-board.js';
import { rolloutReport } from '../format/rollout-report.js';
import { DEFAULT_MODEL_ID } from '../default-model.js';
import { remoteClient, withRemoteOptions, type RemoteOptions } from '../remote-client.js';
import { trackRollouts } from './track-rollouts.js';

/** Options of `flowfleet rollout`. */
export interface RolloutFlags extends RemoteOptions {
  readonly prompt: string;
  readonly seeds: number[];
  readonly model: string;
  readonly steps?: number;
  readonly sampler?: 'sde' | 'ode';
  readonly guidance?: number;
  readonly noiseLevel?: number;
  readonly frames?: number;
  readonly height?: number;
  readonly width?: number;
  readonly weights?: WeightRequirements;
  readonly promptEmbeds?: { readonly sha256: string };
  readonly negativePromptEmbeds?: { readonly sha256: string };
  readonly waitForCapacity?: boolean;
  readonly wait: boolean;
  readonly out?: string;
}

/**
 * Parses `--weights`: comma-separated `component>=version` (at least) or `component=version`
 * (exactly), e.g. `dit>=2` or `dit=3,text_encoder>=1`.
 * @throws InvalidArgumentError for anything else
 */
export function parseWeightRequirements(raw: string): WeightRequirements {
  const requirements: Record<string, { min: number } | { exact: number }> = {};
  for (const part of raw.split(',')) {
    const match = /^\s*([a-z][a-z0-9_]*)\s*(>=|=)\s*(\d+)\s*$/.exec(part);
    const version = Number(match?.[3]);
    if (match === null || !Number.isSafeInteger(version) || version < 1) {
      throw new InvalidArgumentError(`"${part}" is not component>=version or component=version`);
    }
    requirements[match[1] as string] = match[2] === '>=' ? { min: version } : { exact: version };
  }
  return requirements;
}

/** Adds `rollout` to the program. */
export function rolloutCommand(program: Command): Command {
  return withRemoteOptions(
    program
      .command('rollout')
      .description(
        'enqueue one rollout (a prompt × a group of seeds), follow it, print its summary',
      )
      .option('-p, --prompt <text>', 'the prompt', 'a red fox running through fresh snow')
      .option(
        '-s, --seeds <list>',
        'the group: seeds and ranges, e.g. 1,2,7 or 0-3',
        parseSeeds,
        [1, 2, 3, 4],
      )
      .option('-m, --model <id>', 'model card', DEFAULT_MODEL_ID)
      .option('--steps <n>', 'denoise steps (server default 10)', integerIn(1, 1000))
      .option('--sampler <sampler>', 'sde (with log-probs) or ode', oneOf(['sde', 'ode'] as const))
      .option('--guidance <scale>', 'classifier-free guidance scale', numberIn(0, 100))
      .option('--noise-level <a>', 'FlowGRPO SDE noise level', numberIn(0, 10))
      .option('--frames <n>', 'latent frames', integerIn(1, 1024))
      .option('--height <n>', 'latent height', integerIn(1, 4096))
      .option('--width <n>', 'latent width', integerIn(1, 4096))
      .option(
        '--weights <req>',
        'weight requirement, e.g. dit>=2 or dit=3',
        parseWeightRequirements,
      )
      .option(
        '--prompt-embeds <sha256>',
        "the prompt's uploaded text embeddings (a card whose text input is embeddings)",
        parseSha256,
      )
      .option(
        '--negative-prompt-embeds <sha256>',
        "the negative prompt's uploaded text embeddings (CFG's unconditional branch)",
        parseSha256,
      )
      .option('--wait-for-capacity', 'hold the job when no live worker can serve it yet')
      .option('--no-wait', 'print the enqueued id and return at once')
      .option('-o, --out <file>', 'save the result safetensors here'),
  );
}

/** The request the flags describe. */
export function rolloutRequestOf(flags: RolloutFlags): RolloutRequestInput {
  const shape =
    flags.frames === undefined && flags.height === undefined && flags.width === undefined
      ? undefined
      : { frames: flags.frames ?? 4, height: flags.height ?? 16, width: flags.width ?? 16 };
  return {
    model: flags.model,
    prompt: flags.prompt,
    seeds: flags.seeds,
    ...(flags.steps === undefined ? {} : { steps: flags.steps }),
    ...(flags.sampler === undefined ? {} : { sampler: flags.sampler }),
    ...(flags.guidance === undefined ? {} : { guidanceScale: flags.guidance }),
    ...(flags.noiseLevel === undefined ? {} : { noiseLevel: flags.noiseLevel }),
    ...(shape === undefined ? {} : { shape }),
    ...(flags.weights === undefined ? {} : { weights: flags.weights }),
    ...(flags.promptEmbeds === undefined ? {} : { promptEmbeds: flags.promptEmbeds }),
    ...(flags.negativePromptEmbeds === undefined
      ? {}
      : { negativePromptEmbeds: flags.negativePromptEmbeds }),
    ...(flags.waitForCapacity === true ? { waitForCapacity: true } : {}),
  };
}

/**
 * `flowfleet rollout`: enqueue, follow (bars on a terminal, state lines otherwise), print the
 * summary (`--json`: the enqueue answer and the final status).
 */
export async function runRollout(flags: RolloutFlags, io: CliIo): Promise<number> {
  const client = remoteClient(flags, io);
  const json = flags.json === true;
  const enqueued = await client.enqueueRollouts(rolloutRequestOf(flags), { signal: io.signal });
  if (!flags.wait) {
    line(io.out, json ? JSON.stringify(enqueued) : `${enqueued.id} queued on ${enqueued.lane}`);
    return EXIT_CODES.ok;
  }
  if (!json) {
    line(
      io.out,
      `enqueued ${enqueued.id} on ${enqueued.lane} (${enqueued.eligibleWorkers} eligible workers)`,
    );
  }
  const board = new ProgressBoard(json ? () => undefined : io.out, io.isTTY && !json, io.columns);
  const [status] = await trackRollouts(
    client,
    [
      {
        id: enqueued.id,
        label: `${shortId(enqueued.id)} ${flags.prompt.slice(0, 24)}`,
        steps: flags.steps ?? 10,
      },
    ],
    board,
    io.signal,
  );
  if (status === undefined) return EXIT_CODES.failure;
  if (flags.out !== undefined) {
    await writeFile(flags.out, await client.getResultBytes(enqueued.id, { signal: io.signal }));
  }
  if (json) {
    line(
      io.out,
      JSON.stringify({ enqueued, status, ...(flags.out === undefined ? {} : { out: flags.out }) }),
    );
  } else {
    for (const text of rolloutReport(status)) line(io.out, text);
    if (flags.out !== undefined) line(io.out, `result saved to ${flags.out}`);
  }
  return EXIT_CODES.ok;
}
