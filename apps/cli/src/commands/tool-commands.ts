import { readFile } from 'node:fs/promises';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { EXPORT_ONNX_USAGE, exportOnnxFile, parseExportOnnxArgs } from '@flowfleet/models';
import { VERIFY_NUMERICS_EXIT, runVerifyNumerics, verifyVectors } from '@flowfleet/numerics';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { formatBytes } from '../format/numbers.js';

/** Options of `flowfleet verify-numerics`. */
export interface VerifyNumericsFlags {
  readonly verbose?: boolean;
  readonly json?: boolean;
}

/**
 * `flowfleet verify-numerics <vectors.json>`: numerics' own command (the same output and exit
 * codes as `npm run verify-numerics`: 0 all passed, 1 some failed, 2 unusable file); `--json`
 * prints the report (`passed`, `failed`, per group, the failing cases) instead.
 */
export async function runVerifyNumericsCommand(
  flags: VerifyNumericsFlags,
  file: string,
  io: CliIo,
): Promise<number> {
  if (flags.json !== true) {
    return runVerifyNumerics([...(flags.verbose === true ? ['--verbose'] : []), file], {
      readFile: (path) => readFile(path, 'utf8'),
      stdout: (text) => line(io.out, text),
      stderr: (text) => line(io.err, text),
    });
  }
  const unusable = (message: string): number => {
    line(io.out, JSON.stringify({ error: { code: 'CLI_FILE_UNREADABLE', message } }));
    return VERIFY_NUMERICS_EXIT.unusable;
  };
  let vectors: unknown;
  try {
    vectors = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return unusable(`cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  try {
    const report = verifyVectors(vectors);
    line(
      io.out,
      JSON.stringify({
        file,
        passed: report.passed,
        failed: report.failed,
        groups: report.groups,
        failures: report.cases.filter((c) => !c.passed),
        unknownKeys: report.unknownKeys,
      }),
    );
    return report.failed === 0 ? VERIFY_NUMERICS_EXIT.passed : VERIFY_NUMERICS_EXIT.failed;
  } catch (error) {
    if (!isFlowfleetError(error, 'NUM_VECTORS_MALFORMED')) throw error;
    return unusable(`${file} is malformed: ${error.message}`);
  }
}

/** Codes of export-onnx that mean bad usage (exit 2), as in `npm run export-onnx`. */
const EXPORT_USAGE_CODES: ReadonlySet<string> = new Set([
  'MODEL_UNKNOWN_CARD',
  'MODEL_ONNX_OPTIONS_INVALID',
  'MODEL_CONFIG_INVALID',
]);

/**
 * `flowfleet export-onnx …`: models' exporter with its own flags (`--model --out [--component]
 * [--form] [--weights] [--seed] [--batch --frames --height --width]`), plus `--json`.
 * @throws FlowfleetError CLI_USAGE (exit 2) for a usage error; other export errors as they are
 */
export async function runExportOnnx(
  args: readonly string[],
  json: boolean,
  io: CliIo,
): Promise<number> {
  let options;
  try {
    options = parseExportOnnxArgs(args);
    if (options === 'help') {
      line(io.out, EXPORT_ONNX_USAGE);
      return EXIT_CODES.ok;
    }
    const result = await exportOnnxFile(options);
    const summary = {
      out: options.out,
      model: result.model,
      component: result.component,
      form: result.form,
      sizeBytes: result.bytes.length,
      weightsSource: result.weightsSource,
      ...(result.seed === undefined ? {} : { seed: result.seed }),
      ...(result.dims === undefined ? {} : { dims: result.dims }),
    };
    if (json) {
      line(io.out, JSON.stringify(summary));
    } else {
      if (result.weightsSource === 'init') {
        line(
          io.err,
          `export-onnx: no --weights given: baking the deterministic init (seed ${result.seed})`,
        );
      }
      const dims = result.dims === undefined ? 'symbolic dims' : JSON.stringify(result.dims);
      line(
        io.out,
        `wrote ${options.out}: ${result.model} ${result.component} ${result.form} (${formatBytes(result.bytes.length)}, ${dims})`,
      );
    }
    return EXIT_CODES.ok;
  } catch (error) {
    if (isFlowfleetError(error) && EXPORT_USAGE_CODES.has(error.code)) {
      if (!json) line(io.err, EXPORT_ONNX_USAGE);
      throw new FlowfleetError('CLI_USAGE', `export-onnx: ${error.code}: ${error.message}`, {
        details: { code: error.code, ...(error.details as object) },
        cause: error,
      });
    }
    throw error;
  }
}
