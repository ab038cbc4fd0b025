import { it } from 'vitest';
import {
  componentConformanceChecks,
  type ComponentConformanceCase,
  type ComponentConformanceOptions,
} from './component-conformance.js';

/**
 * Registers the shared component conformance suite as vitest tests; call it inside a `describe`
 * of the backend's test file after its cells are declared. `cases` come from the caller (a test
 * may import the model cards; backends itself may not).
 */
export function runComponentConformance(
  backendName: string,
  cases: () => readonly ComponentConformanceCase[],
  options: ComponentConformanceOptions = {},
  timeoutMs = 60_000,
): void {
  for (const check of componentConformanceChecks(backendName, cases(), options)) {
    it(check.name, () => check.run(), timeoutMs);
  }
}
