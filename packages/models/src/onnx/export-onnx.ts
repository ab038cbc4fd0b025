import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { DEFAULT_CARD_REGISTRY } from '../cards/card-registry.js';
import { TEXT_ENCODER_PREFIX } from '../wan21/parameter-shapes.js';
import { loadWeightsFile } from '../weights/weights-file.js';
import type { OnnxComponent } from '../wan21/onnx/onnx-artifacts.js';
import type { OnnxBuildOptions, OnnxForm } from '../wan21/onnx/onnx-options.js';

/** What to export: a card's component in one form. */
export interface ExportOnnxOptions {
  /** Model card id, e.g. `wan21-mini`. */
  readonly model: string;
  /** Default `dit`. */
  readonly component?: OnnxComponent;
  /** Default `eager`. */
  readonly form?: OnnxForm;
  /** Weights to bake (captured only); tensors of the other component are ignored. */
  readonly weights?: ReadonlyMap<string, TensorData>;
  /** Seed of the deterministic init used when a captured export gets no weights (default 0). */
  readonly seed?: number;
  /** Captured only: fixed batch (default 1). */
  readonly batch?: number;
  /** Captured DiT only: fixed latent frames/height/width (default: the card's latent defaults). */
  readonly frames?: number;
  readonly height?: number;
  readonly width?: number;
}

/** The exported bytes and how they were made. */
export interface ExportOnnxResult {
  readonly bytes: Uint8Array;
  readonly model: string;
  readonly component: OnnxComponent;
  readonly form: OnnxForm;
  /** `inputs`: eager (weights are graph inputs); `given`: baked from options; `init`: baked from the deterministic init. */
  readonly weightsSource: 'inputs' | 'given' | 'init';
  /** The init seed when `weightsSource` is `init`. */
  readonly seed?: number;
  /** The fixed dims of a captured export. */
  readonly dims?: Readonly<Record<string, number>>;
}

function invalid(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

function componentWeights(
  weights: ReadonlyMap<string, TensorData>,
  component: OnnxComponent,
): Map<string, TensorData> {
  const keep = (name: string): boolean =>
    component === 'text_encoder'
      ? name.startsWith(TEXT_ENCODER_PREFIX)
      : !name.startsWith(TEXT_ENCODER_PREFIX);
  return new Map([...weights].filter(([name]) => keep(name)));
}

/**
 * Builds the ONNX bytes of a card component (the logic behind `npm run export-onnx` and the
 * `flowfleet export-onnx` command). Eager exports take no weights and no dims; captured exports
 * bake `weights` (or the deterministic init of `seed`) and fix every dim.
 *
 * @throws MODEL_UNKNOWN_CARD for an unknown model id.
 * @throws MODEL_ONNX_OPTIONS_INVALID for an unknown component or form, or options that do not apply
 *   to the form (weights or dims with `eager`, latent dims for the text encoder).
 * @throws MODEL_WEIGHTS_MISMATCH when the weights do not match the card's config.
 */
export function exportOnnx(options: ExportOnnxOptions): ExportOnnxResult {
  const card = DEFAULT_CARD_REGISTRY.get(options.model);
  const component = options.component ?? 'dit';
  const form = options.form ?? 'eager';
  const spec = card.components.find((c) => c.id === component);
  const buildOnnx = spec?.artifacts['buildOnnx'];
  if (spec === undefined || typeof buildOnnx !== 'function') {
    throw invalid(`model ${card.id} has no ONNX graph for component "${component}"`, {
      field: 'component',
      component,
      known: card.components.map((c) => c.id),
    });
  }
  if (form !== 'eager' && form !== 'captured') {
    throw invalid(`unknown form "${String(form)}" (expected eager or captured)`, { field: 'form' });
  }
  const dimFields = ['batch', 'frames', 'height', 'width'] as const;
  const given = dimFields.filter((f) => options[f] !== undefined);
  if (form === 'eager' && (given.length > 0 || options.weights !== undefined)) {
    throw invalid('the eager form takes weights as inputs and has symbolic dims', {
      field: options.weights !== undefined ? 'weights' : given[0],
    });
  }
  const latentFields = given.filter((f) => f !== 'batch');
  if (component === 'text_encoder' && latentFields.length > 0) {
    throw invalid('the text encoder has no latent dims', { field: latentFields[0] });
  }
  const build = buildOnnx as (o: OnnxBuildOptions) => Uint8Array;
  const base = { model: card.id, component, form } as const;
  if (form === 'eager') {
    return { ...base, bytes: build({ form }), weightsSource: 'inputs' };
  }
  const dims: Record<string, number> = { batch: options.batch ?? 1 };
  if (component === 'dit') {
    dims['frames'] = options.frames ?? card.latent.frames;
    dims['height'] = options.height ?? card.latent.height;
    dims['width'] = options.width ?? card.latent.width;
  }
  const seed = options.seed ?? 0;
  const weights =
    options.weights !== undefined
      ? componentWeights(options.weights, component)
      : spec.initWeights(seed);
  const bytes = build({ form, weights, ...dims });
  return options.weights !== undefined
    ? { ...base, bytes, weightsSource: 'given', dims }
    : { ...base, bytes, weightsSource: 'init', seed, dims };
}

/** `exportOnnx` with weights read from a .safetensors file and the result written to `out`. */
export interface ExportOnnxFileOptions extends Omit<ExportOnnxOptions, 'weights'> {
  readonly out: string;
  readonly weightsPath?: string;
}

/**
 * Exports to a file (written atomically: temp file + rename).
 *
 * @throws the codes of `exportOnnx`, MODEL_WEIGHTS_IO / FMT_SAFETENSORS_INVALID for the weights
 *   file, and MODEL_WEIGHTS_IO when the output cannot be written.
 */
export async function exportOnnxFile(options: ExportOnnxFileOptions): Promise<ExportOnnxResult> {
  const { out, weightsPath, ...rest } = options;
  const weights =
    weightsPath === undefined ? undefined : (await loadWeightsFile(weightsPath)).tensors;
  const result = exportOnnx(weights === undefined ? rest : { ...rest, weights });
  const temp = `${out}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(out), { recursive: true });
    await writeFile(temp, result.bytes);
    await rename(temp, out);
  } catch (cause) {
    await rm(temp, { force: true });
    throw new FlowfleetError('MODEL_WEIGHTS_IO', `cannot write ONNX file ${out}`, {
      details: { path: out },
      cause,
    });
  }
  return result;
}
