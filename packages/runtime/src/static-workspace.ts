import { FlowfleetError } from '@flowfleet/errors';
import type { CapturedForward } from '@flowfleet/platform';
import type { GraphWorkspace, RuntimeTensor, RuntimeTensorMap } from '@flowfleet/models';
import { allocateLike, sameDims, tensorBytes } from './runtime-tensor.js';

/** What a static workspace is made of, fixed when its graph is captured. */
export interface StaticWorkspaceParts {
  /** The inputs' shapes and dtypes (the values are copied in by `bind`). */
  readonly inputs: RuntimeTensorMap;
  readonly workspaceBytes: number;
  readonly forwards: ReadonlyMap<string, CapturedForward>;
  readonly kernels: ReadonlyMap<string, unknown>;
}

interface ScratchView {
  readonly kind: 'f32' | 'f64';
  readonly view: Float32Array | Float64Array;
}

function describe(tensor: RuntimeTensor): string {
  return `${tensor.dtype}[${tensor.dims.join(', ')}]`;
}

/**
 * The static workspace of one captured graph: preallocated input buffers, one scratch arena of
 * exactly `workspaceBytes`, the captured forwards and pre-resolved kernels. A replay copies the
 * current step's inputs into the same buffers (after exact name, dims and dtype checks).
 */
export class StaticWorkspace implements GraphWorkspace {
  readonly workspaceBytes: number;
  readonly #arena: ArrayBuffer;
  #cursor = 0;
  readonly #scratch = new Map<string, ScratchView>();
  readonly #inputs: Map<string, RuntimeTensor>;
  readonly #forwards: ReadonlyMap<string, CapturedForward>;
  readonly #kernels: ReadonlyMap<string, unknown>;

  constructor(parts: StaticWorkspaceParts) {
    this.workspaceBytes = parts.workspaceBytes;
    this.#arena = new ArrayBuffer(parts.workspaceBytes);
    this.#inputs = new Map(
      Object.entries(parts.inputs).map(([name, tensor]) => [name, allocateLike(tensor)]),
    );
    this.#forwards = parts.forwards;
    this.#kernels = parts.kernels;
  }

  /** Memory held: arena, input buffers and the captured forwards. */
  get bytesHeld(): number {
    let bytes = this.workspaceBytes;
    for (const tensor of this.#inputs.values()) bytes += tensorBytes(tensor);
    for (const forward of this.#forwards.values()) bytes += forward.bytesHeld;
    return bytes;
  }

  /**
   * Copies this step's input values into the static buffers.
   * @throws FlowfleetError RT_GRAPH_BIND_MISMATCH when names, dims or dtype differ from capture
   */
  bind(inputs: RuntimeTensorMap): void {
    const given = Object.keys(inputs).sort();
    const expected = [...this.#inputs.keys()].sort();
    if (given.length !== expected.length || given.some((name, i) => name !== expected[i])) {
      throw new FlowfleetError(
        'RT_GRAPH_BIND_MISMATCH',
        `replay inputs [${given.join(', ')}] differ from the captured [${expected.join(', ')}]`,
        { details: { given, expected } },
      );
    }
    for (const [name, tensor] of Object.entries(inputs)) {
      const slot = this.#inputs.get(name)!;
      if (slot.dtype !== tensor.dtype || !sameDims(slot.dims, tensor.dims)) {
        throw new FlowfleetError(
          'RT_GRAPH_BIND_MISMATCH',
          `replay input '${name}' is ${describe(tensor)}, the graph was captured with ${describe(slot)}`,
          {
            details: {
              input: name,
              given: { dtype: tensor.dtype, dims: [...tensor.dims] },
              captured: { dtype: slot.dtype, dims: [...slot.dims] },
            },
          },
        );
      }
      if (tensor.data.length !== slot.data.length) {
        throw new FlowfleetError(
          'RT_GRAPH_BIND_MISMATCH',
          `replay input '${name}' holds ${tensor.data.length} values for dims [${tensor.dims.join(', ')}]`,
          { details: { input: name, length: tensor.data.length, expected: slot.data.length } },
        );
      }
      (slot.data as { set(source: ArrayLike<unknown>): void }).set(tensor.data);
    }
  }

  input(name: string): RuntimeTensor {
    const tensor = this.#inputs.get(name);
    if (tensor === undefined) throw this.#defect(`graph input '${name}' was not captured`);
    return tensor;
  }

  scratchF32(name: string, length: number): Float32Array {
    return this.#carve(name, 'f32', length) as Float32Array;
  }

  scratchF64(name: string, length: number): Float64Array {
    return this.#carve(name, 'f64', length) as Float64Array;
  }

  forward(componentId: string): CapturedForward {
    const forward = this.#forwards.get(componentId);
    if (forward === undefined) throw this.#defect(`component '${componentId}' was not captured`);
    return forward;
  }

  kernel<F>(op: string): F {
    if (!this.#kernels.has(op)) throw this.#defect(`kernel '${op}' was not resolved at capture`);
    return this.#kernels.get(op) as F;
  }

  /** Disposes every captured forward (each one even when another fails). */
  async dispose(): Promise<void> {
    const results = await Promise.allSettled([...this.#forwards.values()].map((f) => f.dispose()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
  }

  #carve(name: string, kind: 'f32' | 'f64', length: number): Float32Array | Float64Array {
    const existing = this.#scratch.get(name);
    if (existing !== undefined) {
      if (existing.kind !== kind || existing.view.length !== length) {
        throw this.#defect(
          `scratch '${name}' was carved as ${existing.kind}[${existing.view.length}]`,
        );
      }
      return existing.view;
    }
    const itemBytes = kind === 'f32' ? 4 : 8;
    const offset = Math.ceil(this.#cursor / itemBytes) * itemBytes;
    const end = offset + length * itemBytes;
    if (end > this.workspaceBytes) {
      throw new FlowfleetError(
        'RT_WORKSPACE_OVERFLOW',
        `scratch '${name}' needs bytes up to ${end}; the workspace has ${this.workspaceBytes}`,
        { details: { scratch: name, neededBytes: end, workspaceBytes: this.workspaceBytes } },
      );
    }
    const view =
      kind === 'f32'
        ? new Float32Array(this.#arena, offset, length)
        : new Float64Array(this.#arena, offset, length);
    this.#cursor = end;
    this.#scratch.set(name, { kind, view });
    return view;
  }

  #defect(message: string): FlowfleetError {
    return new FlowfleetError('INTERNAL_ERROR', message);
  }
}
