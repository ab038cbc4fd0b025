// Exports a model card component as an ONNX file.
//
//   npm run export-onnx -- --model wan21-mini --out dit.onnx [--component <id>, e.g. text_encoder]
//     [--weights w.safetensors] [--form eager|captured] [--batch N --frames F --height H --width W]
//     [--seed S]
//
// Exit codes: 0 written; 2 bad usage (unknown flag, model, component or form, bad numbers,
// options that do not fit the form); 1 anything else (unreadable weights, unwritable output).
import { isFlowfleetError } from '@flowfleet/errors';
import { EXPORT_ONNX_USAGE, exportOnnxFile, parseExportOnnxArgs } from '@flowfleet/models';

const USAGE_CODES: ReadonlySet<string> = new Set([
  'MODEL_UNKNOWN_CARD',
  'MODEL_ONNX_OPTIONS_INVALID',
  'MODEL_CONFIG_INVALID',
]);

async function main(): Promise<number> {
  try {
    const options = parseExportOnnxArgs(process.argv.slice(2));
    if (options === 'help') {
      process.stdout.write(`${EXPORT_ONNX_USAGE}\n`);
      return 0;
    }
    const result = await exportOnnxFile(options);
    if (result.weightsSource === 'init') {
      process.stderr.write(
        `export-onnx: no --weights given: baking the deterministic init (seed ${result.seed})\n`,
      );
    }
    const dims = result.dims === undefined ? 'symbolic dims' : JSON.stringify(result.dims);
    process.stdout.write(
      `wrote ${options.out}: ${result.model} ${result.component} ${result.form} ` +
        `(${result.bytes.length} bytes, ${dims})\n`,
    );
    return 0;
  } catch (error) {
    if (!isFlowfleetError(error)) throw error;
    const usage = USAGE_CODES.has(error.code);
    process.stderr.write(
      `export-onnx: ${error.code}: ${error.message}\n${usage ? `${EXPORT_ONNX_USAGE}\n` : ''}`,
    );
    return usage ? 2 : 1;
  }
}

process.exitCode = await main();
