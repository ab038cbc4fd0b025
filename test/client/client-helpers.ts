// Helpers shared by the client tests: clients per role against a started test coordinator, and
// catching a coded error.
import { FlowfleetClient, type FlowfleetClientOptions } from '@flowfleet/client';
import { isFlowfleetError, type FlowfleetError } from '@flowfleet/errors';
import { TOKENS, type TestCoordinator } from '../coordinator/fixture.js';

/** A client holding `role`'s token (fast retries so failure tests stay quick). */
export function clientFor(
  fixture: TestCoordinator,
  role: keyof typeof TOKENS,
  options: Partial<FlowfleetClientOptions> = {},
): FlowfleetClient {
  return FlowfleetClient.create({
    baseUrl: fixture.url,
    token: TOKENS[role],
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    ...options,
  });
}

/** The FlowfleetError `promise` rejects with (fails the test on success or another error). */
export async function rejection(promise: Promise<unknown>): Promise<FlowfleetError> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error;
    throw error;
  }
  throw new Error('expected a FlowfleetError, but the call succeeded');
}
