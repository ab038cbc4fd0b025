import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { DEFAULT_CARD_REGISTRY } from '../cards/card-registry.js';
import type { ModelCard } from '../cards/model-card.js';
import { loadWeightsFile } from '../weights/weights-file.js';
import { checkForm, type OnnxForm } from './onnx-form.js';

/** What to export: a card's component in one form. */
export interface ExportOnnxOptions {
  /** Model card id (one of the default card registry's). */
  readonly model: string;
  /** Default: the card's first component with an ONNX graph. */
  readonly component?: string;
  /** Default `eager`. */
  readonly form?: OnnxForm;
  /** Weights to bake (captured only); tensors of the card's other components are ignored. */
  readonly weights?: ReadonlyMap<string, TensorData>;
  /** Seed of the deterministic init used when a captured export gets no weights (default 0). */
  readonly seed?: number;
  /** Captured only: fixed batch (default 1). */
  readonly batch?: number;
  /**
   * Captured only, for a component whose inputs follow the latent size: fixed latent
   * frames/height/width (default: the card's latent defaults).
   */
  readonly frames?: number;
  readonly height?: number;
  readonly width?: number;
}

/** The exported bytes and how they were made. */
export interface ExportOnnxResult {
  readonly bytes: Uint8Array;
  readonly model: string;
  readonly component: string;
  readonly form: OnnxForm;
  /** `inputs`: eager (weights are graph inputs); `given`: baked from options; `init`: baked from the deterministic init. */
  readonly weightsSource: 'inputs' | 'given' | 'init';
  /** The init seed when `weightsSource` is `init`. */
  readonly seed?: number;
  /** The fixed dims of a captured export: `batch`, and the latent's when the inputs follow it. */
  readonly dims?: Readonly<Record<string, number>>;
}

function invalid(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

/** `weights` without the tensors of the card's components other than `component`. */
function componentWeights(
  card: ModelCard,
  component: string,
  weights: ReadonlyMap<string, TensorData>,
): Map<string, TensorData> {
  const others = new Set(
    card.components
      .filter((c) => c.id !== component)
      .flatMap((c) => [...c.parameterShapes().keys()]),
  );
  return new Map([...weights].filter(([name]) => !others.has(name)));
}

/**
 * Builds the ONNX bytes of a card component (the logic behind `npm run export-onnx` and the
 * `flowfleet export-onnx` command) through the component's ONNX artifacts. Eager exports take no
 * weights and no dims; captured exports bake `weights` (or the deterministic init of `seed`) and
 * fix every input dim of one forward.
 *
 * @throws MODEL_UNKNOWN_CARD for an unknown model id.
 * @throws MODEL_ONNX_OPTIONS_INVALID for an unknown component or one without an ONNX graph, an
 *   unknown form, or options that do not apply (weights or dims with `eager`, latent dims for a
 *   component whose inputs do not follow the latent).
 * @throws MODEL_WEIGHTS_MISMATCH when the weights do not match the card's config.
 */
export function exportOnnx(options: ExportOnnxOptions): ExportOnnxResult {
  const card = DEFAULT_CARD_REGISTRY.get(options.model);
  const withOnnx = card.components.filter((c) => c.onnx !== undefined);
  const component = options.component ?? withOnnx[0]?.id ?? '';
  const spec = withOnnx.find((c) => c.id === component);
  if (spec?.onnx === undefined) {
    throw invalid(`model ${card.id} has no ONNX graph for component "${component}"`, {
      field: 'component',
      component,
      known: withOnnx.map((c) => c.id),
    });
  }
  const form = options.form ?? 'eager';
  checkForm(form);
  const dimFields = ['batch', 'frames', 'height', 'width'] as const;
  const given = dimFields.filter((f) => options[f] !== undefined);
  if (form === 'eager' && (given.length > 0 || options.weights !== undefined)) {
    throw invalid('the eager form takes weights as inputs and has symbolic dims', {
      field: options.weights !== undefined ? 'weights' : given[0],
    });
  }
  const latentFields = given.filter((f) => f !== 'batch');
  if (!spec.latentSized && latentFields.length > 0) {
    throw invalid(`the ${component} component has no latent dims`, { field: latentFields[0] });
  }
  const base = { model: card.id, component, form } as const;
  if (form === 'eager') {
    return { ...base, bytes: spec.onnx.buildOnnx({ form }), weightsSource: 'inputs' };
  }
  const batch = options.batch ?? 1;
  const latent = {
    frames: options.frames ?? card.latent.frames,
    height: options.height ?? card.latent.height,
    width: options.width ?? card.latent.width,
  };
  const dims: Record<string, number> = spec.latentSized ? { batch, ...latent } : { batch };
  const seed = options.seed ?? 0;
  const weights =
    options.weights !== undefined
      ? componentWeights(card, component, options.weights)
      : spec.initWeights(seed);
  const inputDims = spec.forwardInputDims(batch, latent);
  const bytes = spec.onnx.buildOnnx({ form, weights, inputDims });
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
