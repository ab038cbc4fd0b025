import type { TensorData, TensorMap } from '@flowfleet/platform';
import type { GraphWorkspace, StepInstance } from './loop-types.js';

/** What a step's compute needs: a forward, kernels and scratch (fresh or from a workspace). */
export interface StepIO {
  forward(inputs: TensorMap): Promise<Record<string, TensorData>>;
  kernel<F>(op: string): F;
  f32(name: string, length: number): Float32Array;
  f64(name: string, length: number): Float64Array;
}

/** Eager IO: the component's generic forward with the pinned weights, fresh buffers. */
export function eagerIO(instance: StepInstance, componentId: string): StepIO {
  const component = instance.component(componentId);
  const weights = instance.weights(componentId);
  return {
    forward: (inputs) => component.run(inputs, weights),
    kernel: (op) => instance.kernels.get(op),
    f32: (_name, length) => new Float32Array(length),
    f64: (_name, length) => new Float64Array(length),
  };
}

/** Graph IO: the captured forward, kernels resolved at capture, scratch from the static arena. */
export function graphIO(workspace: GraphWorkspace, componentId: string): StepIO {
  const forward = workspace.forward(componentId);
  return {
    forward: (inputs) => forward.run(inputs),
    kernel: (op) => workspace.kernel(op),
    f32: (name, length) => workspace.scratchF32(name, length),
    f64: (name, length) => workspace.scratchF64(name, length),
  };
}

/** Bytes an arena needs for these scratch requests, carved in order with natural alignment. */
export function arenaBytes(
  requests: readonly { readonly itemBytes: 4 | 8; readonly length: number }[],
): number {
  let cursor = 0;
  for (const { itemBytes, length } of requests) {
    cursor = Math.ceil(cursor / itemBytes) * itemBytes + itemBytes * length;
  }
  return cursor;
}
