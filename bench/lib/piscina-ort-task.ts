// The piscina side of bench:pool: the same ONNX Runtime work as the compute pool's ort handler,
// written as a piscina task module. Piscina keeps no state for a task, so the sessions and the
// resident weight sets live in this module's scope, once per worker thread (the only place
// piscina offers); outputs are moved back with `Piscina.move`. Loaded only when PISCINA_DIR
// names a directory where `npm install piscina` was run (the repo does not depend on piscina).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadOrt, ortSessionOptions } from '@flowfleet/backends';
import { unsharedTensor, type TensorData } from '@flowfleet/platform';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

interface PiscinaStatics {
  move(value: unknown): unknown;
  readonly transferableSymbol: symbol;
  readonly valueSymbol: symbol;
}

export type PiscinaOrtTask =
  | { readonly op: 'createSession'; readonly sessionId: string; readonly model: Uint8Array }
  | {
      readonly op: 'upload';
      readonly weightsId: string;
      readonly tensors: ReadonlyMap<string, TensorData>;
    }
  | {
      readonly op: 'run';
      readonly sessionId: string;
      readonly weightsId?: string;
      readonly inputs: Readonly<Record<string, TensorData>>;
    };

const sessions = new Map<string, InferenceSession>();
const weightSets = new Map<string, Map<string, Tensor>>();
let piscina: Promise<PiscinaStatics> | undefined;

function loadPiscina(): Promise<PiscinaStatics> {
  const dir = process.env['PISCINA_DIR'];
  if (dir === undefined) throw new Error('PISCINA_DIR is not set');
  const entry = pathToFileURL(join(dir, 'node_modules/piscina/dist/main.js')).href;
  piscina ??= import(entry).then((m: { default: PiscinaStatics }) => m.default);
  return piscina;
}

export async function runOrtTask(request: PiscinaOrtTask): Promise<unknown> {
  // Timed like the compute pool's busyMs: the whole task body, not only session.run.
  const started = performance.now();
  const ort = await loadOrt();
  switch (request.op) {
    case 'createSession': {
      const options = ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 });
      sessions.set(request.sessionId, await ort.InferenceSession.create(request.model, options));
      return null;
    }
    case 'upload': {
      const tensors = new Map<string, Tensor>();
      for (const [name, shared] of request.tensors) {
        const t = unsharedTensor(shared);
        tensors.set(name, new ort.Tensor(t.dtype, t.data, t.dims));
      }
      weightSets.set(request.weightsId, tensors);
      return null;
    }
    case 'run': {
      const session = sessions.get(request.sessionId);
      if (session === undefined) throw new Error(`no session ${request.sessionId} in this thread`);
      const feeds: Record<string, Tensor> = {};
      const weights =
        request.weightsId === undefined ? undefined : weightSets.get(request.weightsId);
      for (const name of session.inputNames) {
        const w = weights?.get(name);
        if (w !== undefined) feeds[name] = w;
      }
      for (const [name, t] of Object.entries(request.inputs)) {
        feeds[name] = new ort.Tensor(t.dtype, t.data, t.dims);
      }
      const outputs = await session.run(feeds);
      const value: Record<string, TensorData> = {};
      const buffers: ArrayBuffer[] = [];
      for (const [name, out] of Object.entries(outputs)) {
        const raw = out.data as Float32Array;
        const owned = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
        const data = owned ? raw : raw.slice();
        value[name] = { dtype: 'float32', dims: [...out.dims], data };
        buffers.push(data.buffer as ArrayBuffer);
      }
      const Piscina = await loadPiscina();
      const runMs = performance.now() - started;
      return Piscina.move({
        [Piscina.transferableSymbol]: buffers,
        [Piscina.valueSymbol]: { outputs: value, runMs },
      });
    }
  }
}
