import assert from 'node:assert/strict';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  bitIdentical,
  within,
  type ComponentBuildContext,
  type ComponentForward,
  type ComponentSpec,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import type { Cell, ComponentBuilder } from '@flowfleet/registry';
import { resolveRegistries, type BackendRegistries } from '@flowfleet/backends';

/** One async conformance check; `run` rejects with an AssertionError when the backend falls short. */
export interface AsyncConformanceCheck {
  readonly name: string;
  run(): Promise<void>;
}

/** One component to hold a backend's builders to: the card spec, weights and two input sets. */
export interface ComponentConformanceCase {
  /** The card's component spec (its `factory` is the TS reference, the oracle). */
  readonly spec: ComponentSpec<unknown, ComponentForward>;
  readonly weights: WeightSet;
  /** Two different input sets of the same dims: replaying a capture must follow the inputs. */
  readonly inputs: readonly [TensorMap, TensorMap];
  /** The output to compare (e.g. `velocity`). */
  readonly output: string;
}

type Forward = ComponentForward;

/** Where the suite finds the cells, and what it hands their builders and the card's factory. */
export interface ComponentConformanceOptions extends BackendRegistries {
  /**
   * The build context of every build (the compute pool the components run in), read when a
   * check runs, so a test can create its pool in `beforeAll`. Default: no pool.
   */
  readonly buildContext?: () => ComponentBuildContext;
}

function floats(outputs: Record<string, TensorData>, name: string, where: string): Float32Array {
  const data = outputs[name]?.data;
  assert.ok(data instanceof Float32Array, `${where}: no float32 output '${name}'`);
  return data;
}

function dimsOf(inputs: TensorMap): Record<string, readonly number[]> {
  return Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, t.dims]));
}

/**
 * The shared conformance checks for a backend's component builders (cells of COMPONENTS whose
 * `source` is `backendName` and whose kind matches a case): every available builder produces a
 * component that (1) matches the card's TS reference within the tolerance stated in the cell's
 * meta (`parityRtol`/`parityAtol`), (2) when it can capture, replays bit-identically to its own
 * eager run and follows new inputs, (3) survives `releaseWeights` (re-uploads on the next run),
 * (4) rejects inputs of the wrong shape with a coded error, and (5) disposes idempotently.
 * Unavailable cells must say why.
 */
export function componentConformanceChecks(
  backendName: string,
  cases: readonly ComponentConformanceCase[],
  options: ComponentConformanceOptions = {},
): AsyncConformanceCheck[] {
  const { components } = resolveRegistries(options);
  const context = () => options.buildContext?.() ?? { pool: undefined };
  const cells = components.cells().filter((cell) => cell.source === backendName);
  const checks: AsyncConformanceCheck[] = [];
  for (const cell of cells) {
    const [kind = ''] = cell.key;
    const label = `(${cell.key.join(', ')})`;
    const availability = components.probe(cell);
    if (!availability.available) {
      checks.push({
        name: `${label} is unavailable here and says why`,
        run: async () => {
          assert.ok((availability.reason ?? '').length > 0, `${label}: unavailable with no reason`);
        },
      });
      continue;
    }
    for (const testCase of cases.filter((c) => c.spec.kind === kind)) {
      checks.push({
        name: `${label} conforms on '${testCase.spec.id}'`,
        run: () => checkComponent(label, cell, testCase, context()),
      });
    }
  }
  return checks;
}

async function build(
  builder: ComponentBuilder,
  spec: ComponentSpec<unknown, ComponentForward>,
  context: ComponentBuildContext,
): Promise<Forward> {
  const typed = builder as unknown as (
    s: typeof spec,
    instance: unknown,
    context: ComponentBuildContext,
  ) => Promise<Forward>;
  return typed(spec, undefined, context);
}

async function checkComponent(
  label: string,
  cell: Cell<ComponentBuilder>,
  testCase: ComponentConformanceCase,
  context: ComponentBuildContext,
): Promise<void> {
  const { spec, weights, inputs, output } = testCase;
  const { parityRtol, parityAtol } = cell.meta;
  assert.ok(
    typeof parityRtol === 'number' && typeof parityAtol === 'number',
    `${label} states no parityRtol/parityAtol in its meta`,
  );
  const reference = await spec.factory(spec, undefined, context);
  const component = await build(cell.fn, spec, context);
  try {
    // (1) eager parity with the TS reference, on both input sets.
    const eager: Float32Array[] = [];
    for (const [i, input] of inputs.entries()) {
      const actual = floats(await component.run(input, weights), output, `${label} eager #${i}`);
      const expected = floats(await reference.run(input, weights), output, `reference #${i}`);
      const verdict = within(actual, expected, { rtol: parityRtol, atol: parityAtol });
      assert.ok(
        verdict.passed,
        `${label} input #${i}: max-abs ${verdict.maxAbs}, max-rel ${verdict.maxRel} exceed rtol ${parityRtol} / atol ${parityAtol}`,
      );
      eager.push(actual);
    }
    assert.ok(
      !bitIdentical(eager[0]!, eager[1]!),
      `${label}: different inputs gave the same output`,
    );

    // (2) capture ≡ eager, bit for bit, and a replay follows its inputs.
    if (component.capture !== undefined) {
      const captured = await component.capture(weights, dimsOf(inputs[0]));
      try {
        for (const [i, input] of inputs.entries()) {
          const replay = floats(await captured.run(input), output, `${label} replay #${i}`);
          assert.ok(
            bitIdentical(replay, eager[i]!),
            `${label}: replay #${i} is not bit-identical to eager`,
          );
        }
        assert.ok(captured.bytesHeld > 0, `${label}: a captured graph reports 0 bytes held`);
      } finally {
        await captured.dispose();
      }
    }

    // (3) releasing the weights does not break the next run (it uploads them again).
    if (component.releaseWeights !== undefined) {
      await component.releaseWeights(weights.id);
      const again = floats(
        await component.run(inputs[0], weights),
        output,
        `${label} after release`,
      );
      assert.ok(bitIdentical(again, eager[0]!), `${label}: a run after releaseWeights differs`);
    }

    // (4) an input of the wrong shape is a coded error, not a crash.
    const [name, tensor] = Object.entries(inputs[0]).find(([, t]) => t.dims.length > 1) ?? [];
    assert.ok(
      name !== undefined && tensor !== undefined,
      `${label}: no multi-dim input to corrupt`,
    );
    const badDims = [...tensor.dims];
    badDims[badDims.length - 1] = (badDims[badDims.length - 1] ?? 1) + 1;
    const size = badDims.reduce((a, b) => a * b, 1);
    const bad: TensorData = {
      dtype: tensor.dtype,
      dims: badDims,
      data:
        tensor.data instanceof Float32Array
          ? new Float32Array(size)
          : tensor.data instanceof Int32Array
            ? new Int32Array(size)
            : new BigInt64Array(size),
    };
    await assert.rejects(component.run({ ...inputs[0], [name]: bad }, weights), (error) => {
      assert.ok(
        isFlowfleetError(error),
        `${label}: a bad input raised an uncoded ${String(error)}`,
      );
      return true;
    });
  } finally {
    // (5) dispose is idempotent.
    await component.dispose();
    await component.dispose();
    await reference.dispose();
  }
}
