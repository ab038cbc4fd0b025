// A compute handler for compute-pool.test.ts: per-thread state (a counter and named values),
// weight reads, transferred tensor replies, coded and uncoded failures.
import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '../../src/component-types.js';
import {
  tensorsReply,
  type ComputeHandlerFactory,
} from '../../src/worker-threads/compute-handler.js';

export const createComputeHandler: ComputeHandlerFactory = (context, options) => {
  const { greeting } = options as { greeting: string };
  const values = new Map<string, number>();
  let calls = 0;
  return {
    handle(method, payload) {
      calls += 1;
      const p = payload as Record<string, unknown>;
      switch (method) {
        case 'hello':
          return `${greeting} from ${context.threadIndex}`;
        case 'remember':
          values.set(p['key'] as string, p['value'] as number);
          return values.size;
        case 'recall':
          return values.get(p['key'] as string) ?? null;
        case 'sumWeights': {
          let sum = 0;
          for (const tensor of context.weights(p['weightsId'] as string).values()) {
            for (const x of tensor.data as Float32Array) sum += x;
          }
          return sum;
        }
        case 'double': {
          const x = p['x'] as TensorData;
          const data = Float32Array.from(x.data as Float32Array, (v) => 2 * v);
          return tensorsReply({ y: { dtype: 'float32', dims: x.dims, data } });
        }
        case 'coded':
          throw new FlowfleetError('PLAT_PARITY_SHAPE', 'a coded failure', {
            details: { thread: context.threadIndex },
          });
        default:
          throw new Error(`no method ${method}`);
      }
    },
    stats: () => ({ calls, values: values.size }),
  };
};
