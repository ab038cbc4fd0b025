import { parseArgs } from 'node:util';
import { FlowfleetError } from '@flowfleet/errors';
import type { ExportOnnxFileOptions } from './export-onnx.js';

/** Usage text of `npm run export-onnx` / `flowfleet export-onnx`. */
export const EXPORT_ONNX_USAGE = `usage: export-onnx --model <id> --out <file.onnx>
  [--component <id>]               default: the card's first component with an ONNX graph
  [--form eager|captured]          default eager (weights are graph inputs, dims symbolic)
  [--weights <file.safetensors>]   captured only; without it the deterministic init is baked
  [--seed <n>]                     seed of that init (default 0)
  [--batch N] [--frames F] [--height H] [--width W]
                                   captured only (defaults: 1 and the card's latent size)`;

function usage(message: string, details: Record<string, unknown> = {}): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

function integer(flag: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min) {
    throw usage(`--${flag} must be an integer ≥ ${min}, got "${raw}"`, { field: flag });
  }
  return value;
}

/**
 * Parses export-onnx command-line arguments (without the node/script prefix).
 *
 * @throws MODEL_ONNX_OPTIONS_INVALID for an unknown flag, a missing --model/--out, an unknown
 *   form, or a malformed number (exportOnnx checks the component against the card).
 */
export function parseExportOnnxArgs(argv: readonly string[]): ExportOnnxFileOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        model: { type: 'string' },
        out: { type: 'string' },
        component: { type: 'string' },
        form: { type: 'string' },
        weights: { type: 'string' },
        seed: { type: 'string' },
        batch: { type: 'string' },
        frames: { type: 'string' },
        height: { type: 'string' },
        width: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (cause) {
    throw new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', (cause as Error).message, { cause });
  }
  const values = parsed.values;
  if (values.help === true) return 'help';
  if (values.model === undefined) throw usage('--model is required', { field: 'model' });
  if (values.out === undefined) throw usage('--out is required', { field: 'out' });
  const form = values.form ?? 'eager';
  if (form !== 'eager' && form !== 'captured') {
    throw usage(`--form must be eager or captured, got "${form}"`, { field: 'form' });
  }
  const numbers = {
    seed: integer('seed', values.seed, 0),
    batch: integer('batch', values.batch, 1),
    frames: integer('frames', values.frames, 1),
    height: integer('height', values.height, 1),
    width: integer('width', values.width, 1),
  };
  const defined = Object.fromEntries(Object.entries(numbers).filter(([, v]) => v !== undefined));
  return {
    model: values.model,
    out: values.out,
    ...(values.component !== undefined ? { component: values.component } : {}),
    form,
    ...(values.weights !== undefined ? { weightsPath: values.weights } : {}),
    ...defined,
  };
}
