import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubectlPath } from '../../harness/prerequisites.js';

const run = promisify(execFile);

/** The repository root (absolute). */
export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');

/** A path under infra/. */
export function infraPath(...parts: string[]): string {
  return path.join(REPO_ROOT, 'infra', ...parts);
}

/** A parsed YAML document (a Kubernetes object or a compose file). */
export type YamlObject = Record<string, unknown>;

/**
 * Parses every document of a YAML stream.
 * @throws Error naming the first document with a YAML error.
 */
export function parseYamlDocuments(text: string, source: string): YamlObject[] {
  return parseAllDocuments(text)
    .filter((doc) => doc.contents !== null)
    .map((doc, index) => {
      if (doc.errors.length > 0) {
        throw new Error(
          `${source} document ${index}: ${doc.errors.map((e) => e.message).join('; ')}`,
        );
      }
      return doc.toJS() as YamlObject;
    });
}

/** The kustomizations CI renders: the base, the CUDA class template and every overlay. */
export const KUSTOMIZATIONS = [
  'k8s/base',
  'k8s/worker-cuda',
  'k8s/overlays/dev',
  'k8s/overlays/production',
] as const;

/**
 * Renders a kustomization with `kubectl kustomize` (kustomize v5 built into kubectl; no
 * cluster is contacted) and parses the output.
 * @throws Error with kustomize's stderr when the kustomization does not build.
 */
export async function renderKustomization(dir: string): Promise<YamlObject[]> {
  try {
    const { stdout } = await run(kubectlPath(), ['kustomize', dir], {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    return parseYamlDocuments(stdout, dir);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`kubectl kustomize ${dir} failed: ${stderr || (error as Error).message}`, {
      cause: error,
    });
  }
}

/** `Kind/name` of an object, for messages. */
export function objectId(doc: YamlObject): string {
  const metadata = doc['metadata'] as { name?: unknown } | undefined;
  return `${String(doc['kind'])}/${String(metadata?.name ?? '?')}`;
}
