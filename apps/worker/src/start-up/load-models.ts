import { ModelHost } from '../compute/model-host.js';
import type { ComputeParts } from './start-compute.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The models this worker serves. */
export interface ModelParts extends PhaseParts {
  readonly host: ModelHost;
}

/**
 * Phase 3: one ModelInstance per served model, on version-0 weights.
 * @throws FlowfleetError MODEL_UNKNOWN_CARD, MODEL_*, RT_*
 */
export async function loadModels(
  { options }: StartUpContext,
  { compute }: { readonly compute: ComputeParts },
): Promise<ModelParts> {
  const { models, workerId, cards } = options;
  const host = await ModelHost.create(models, compute.backends.platform, workerId, cards);
  return { host, shutdown: [step('models', () => host.close())] };
}
