import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The apps the local fleet runs as children (the CLI never imports them). */
export type FleetApp = 'coordinator' | 'worker';

/** How to start one app: the command and its arguments. */
export interface AppLaunch {
  readonly command: string;
  readonly args: readonly string[];
  /** The repository root (the children's working directory). */
  readonly cwd: string;
}

/** The repository root, from this file's place in it (apps/cli/{src,dist}/local-fleet/). */
export function repoRoot(): string {
  return fileURLToPath(new URL('../../../../', import.meta.url));
}

/** True when the CLI runs from its TypeScript sources (tsx), false from a build (dist/). */
export function runsFromSource(): boolean {
  return import.meta.url.endsWith('.ts');
}

/**
 * How to start `app` the way the CLI itself runs: from source through tsx with the
 * `@flowfleet/source` condition (what `npm run coordinator` does), or from the app's dist/ after
 * `npm run build`. Worker threads inherit these node flags.
 */
export function appLaunch(app: FleetApp): AppLaunch {
  const root = repoRoot();
  if (!runsFromSource()) {
    return {
      command: process.execPath,
      args: [join(root, 'apps', app, 'dist', 'main.js')],
      cwd: root,
    };
  }
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return {
    command: process.execPath,
    args: [
      '--import',
      tsx,
      '--conditions=@flowfleet/source',
      join(root, 'apps', app, 'src', 'main.ts'),
    ],
    cwd: root,
  };
}
