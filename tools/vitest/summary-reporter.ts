import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** What the summary adds to vitest's own. */
export interface SummaryReporterOptions {
  /** How many of the slowest files to list (0: none). */
  readonly slowest?: number;
}

/** A file's share of the run: its project, path and wall time (ms) from start to end. */
interface FileTime {
  readonly project: string;
  readonly file: string;
  readonly ms: number;
}

function fileTimeOf(module: TestModule): FileTime {
  const { environmentSetupDuration, prepareDuration, collectDuration, setupDuration, duration } =
    module.diagnostic();
  return {
    project: module.project.name,
    file: relative(process.cwd(), module.moduleId),
    ms: environmentSetupDuration + prepareDuration + collectDuration + setupDuration + duration,
  };
}

const seconds = (ms: number): string => `${(ms / 1_000).toFixed(1)} s`;

/**
 * Prints, after vitest's own summary, the slowest files (with their project and the time each
 * project's files took in all), so a CI log shows where the run's time goes; then the plain
 * closing line `N passed, M failed, K skipped`, so that CI logs state the count in a
 * runner-independent form.
 */
export class SummaryReporter implements Reporter {
  readonly #slowest: number;

  constructor(options: SummaryReporterOptions = {}) {
    this.#slowest = options.slowest ?? 0;
  }

  onTestRunEnd(testModules: readonly TestModule[], unhandledErrors: readonly unknown[]): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    failed += unhandledErrors.length;
    if (this.#slowest > 0 && testModules.length > 1) {
      process.stdout.write(this.#timings(testModules.map(fileTimeOf)));
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }

  #timings(files: readonly FileTime[]): string {
    const perProject = new Map<string, { files: number; ms: number }>();
    for (const { project, ms } of files) {
      const sum = perProject.get(project) ?? { files: 0, ms: 0 };
      perProject.set(project, { files: sum.files + 1, ms: sum.ms + ms });
    }
    const projects = [...perProject]
      .map(([name, sum]) => `${name || '(root)'}: ${sum.files} files, ${seconds(sum.ms)}`)
      .join('; ');
    const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, this.#slowest);
    const width = Math.max(...slowest.map(({ project }) => project.length));
    const rows = slowest.map(
      ({ project, file, ms }) => `  ${seconds(ms).padStart(8)}  ${project.padEnd(width)}  ${file}`,
    );
    return (
      `\nFile time (setup, import and tests; files of a project may overlap): ${projects}\n` +
      `The ${slowest.length} slowest files:\n${rows.join('\n')}\n`
    );
  }
}
