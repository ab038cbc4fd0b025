// Runs a bench script's clean-up steps in reverse order on success, error or SIGINT/SIGTERM, so
// no redis-server, coordinator or worker outlives the script.

/** A stack of named clean-up steps. */
export class Teardown {
  readonly #steps: { name: string; run: () => Promise<unknown> }[] = [];
  #running: Promise<void> | undefined;

  /** Pushes a step; steps run last-in, first-out. */
  add(name: string, run: () => Promise<unknown>): void {
    this.#steps.push({ name, run });
  }

  /** Runs every step once (each even if an earlier one fails); idempotent. */
  run(): Promise<void> {
    this.#running ??= (async () => {
      while (this.#steps.length > 0) {
        const step = this.#steps.pop()!;
        try {
          await step.run();
        } catch (error) {
          console.error(`teardown: ${step.name} failed:`, error);
        }
      }
    })();
    return this.#running;
  }
}

/**
 * Runs `main` with a Teardown that also runs on SIGINT/SIGTERM; exits 1 when main throws.
 */
export async function runBench(main: (teardown: Teardown) => Promise<void>): Promise<void> {
  const teardown = new Teardown();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void teardown.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let failed = false;
  try {
    await main(teardown);
  } catch (error) {
    failed = true;
    // After a signal, main fails because its servers are gone: that is not news.
    if (!interrupted) console.error(error);
  } finally {
    await teardown.run();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  // Stray handles (a socket the runtime keeps) must not keep a finished bench alive.
  process.exit(failed ? 1 : 0);
}
