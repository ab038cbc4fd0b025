// Writes a Wan2.1 DiT checkpoint with deterministic random weights in one of the two published
// layouts, one tensor in memory at a time (a worker, and `flowfleet sync`, load either).
//
//   npm run write-wan21-checkpoint -- --layout diffusers|wan --out DIR
//     [--config 1.3b|mini] [--dtype F32|BF16|F16] [--seed S] [--max-shard-bytes N]
//
// diffusers: DIR/transformer/diffusion_pytorch_model-0000N-of-0000M.safetensors + its index
// (BF16 by default, as published); wan: DIR/diffusion_pytorch_model.safetensors (F32 by default,
// as published). Each with its layout's config.json.
// Exit codes: 0 written; 2 bad usage; 1 anything else (an unwritable directory).
import { parseArgs } from 'node:util';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  WAN21_1_3B,
  WAN21_MINI,
  writeWan21DitCheckpoint,
  type Wan21CheckpointDtype,
  type Wan21DitLayout,
} from '@flowfleet/models/wan21';

const USAGE =
  'usage: write-wan21-checkpoint --layout diffusers|wan --out DIR [--config 1.3b|mini] ' +
  '[--dtype F32|BF16|F16] [--seed S] [--max-shard-bytes N]';

const CONFIGS = { '1.3b': WAN21_1_3B, mini: WAN21_MINI } as const;

function usage(message: string): never {
  process.stderr.write(`write-wan21-checkpoint: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function positiveInt(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) usage(`${flag} must be a positive integer`);
  return value;
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        layout: { type: 'string' },
        out: { type: 'string' },
        config: { type: 'string', default: '1.3b' },
        dtype: { type: 'string' },
        seed: { type: 'string' },
        'max-shard-bytes': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    usage((error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const layout = values.layout;
  if (layout !== 'diffusers' && layout !== 'wan') usage('--layout must be diffusers or wan');
  if (values.out === undefined) usage('--out is required');
  const config = CONFIGS[values.config as keyof typeof CONFIGS] as
    (typeof CONFIGS)['mini'] | undefined;
  if (config === undefined) usage('--config must be 1.3b or mini');
  const dtype = values.dtype;
  if (dtype !== undefined && dtype !== 'F32' && dtype !== 'BF16' && dtype !== 'F16') {
    usage('--dtype must be F32, BF16 or F16');
  }
  const seed = positiveInt('--seed', values.seed);
  const maxShardBytes = positiveInt('--max-shard-bytes', values['max-shard-bytes']);
  const started = performance.now();
  let lastReport = started;
  try {
    const written = await writeWan21DitCheckpoint({
      config,
      layout: layout as Wan21DitLayout,
      dir: values.out,
      ...(dtype === undefined ? {} : { dtype: dtype as Wan21CheckpointDtype }),
      ...(seed === undefined ? {} : { seed }),
      ...(maxShardBytes === undefined ? {} : { maxShardBytes }),
      onTensor(_name, done, total) {
        const now = performance.now();
        if (now - lastReport < 5_000 && done < total) return;
        lastReport = now;
        process.stderr.write(
          `  ${done}/${total} tensors, ${((now - started) / 1000).toFixed(0)} s\n`,
        );
      },
    });
    process.stdout.write(
      `wrote ${written.path}: ${config.name} ${layout} ${written.dtype}, ` +
        `${written.parameters} parameters, ${written.tensorBytes} tensor bytes in ` +
        `${written.files.length} file(s), ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    process.stderr.write(`write-wan21-checkpoint: ${error.code}: ${error.message}\n`);
    return 1;
  }
}

process.exitCode = await main();
