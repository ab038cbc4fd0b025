// Every Kubernetes manifest under infra/k8s, offline: each kustomization renders with kubectl's
// built-in kustomize, every rendered object validates against its kind's schema (Kubernetes
// OpenAPI via kubernetes-models, KEDA's API via @kubernetes-models/keda) and sets no field the
// kind does not declare, and the fleet's own rules hold (selectors, probes, drain, GPU classes,
// secrets, KEDA triggers on /v1/scaling). No cluster is contacted.
import { describe, expect, test } from 'vitest';
import {
  coordinatorProblems,
  imageProblems,
  scalingProblems,
  selectorProblems,
  workerDeployments,
  workerProblems,
} from './support/fleet-rules.js';
import { schemaErrors } from './support/k8s-schemas.js';
import { unknownFields } from './support/k8s-unknown-fields.js';
import {
  infraPath,
  KUSTOMIZATIONS,
  renderKustomization,
  type YamlObject,
} from './support/manifests.js';

const renders = new Map<string, Promise<YamlObject[]>>();

/** Each kustomization rendered once; a render error fails every test that needs it. */
function render(dir: (typeof KUSTOMIZATIONS)[number]): Promise<YamlObject[]> {
  let docs = renders.get(dir);
  if (docs === undefined) {
    docs = renderKustomization(infraPath(dir));
    docs.catch(() => undefined); // reported by the tests that await it
    renders.set(dir, docs);
  }
  return docs;
}

describe('every kustomization', () => {
  test.each(KUSTOMIZATIONS)(
    '%s renders to objects that validate against their schemas',
    async (dir) => {
      const docs = await render(dir);
      expect(docs.length).toBeGreaterThan(0);
      expect(docs.flatMap(schemaErrors)).toEqual([]);
    },
  );

  test('no rendered object sets a field its kind does not declare', async () => {
    // One TypeScript program for every render (a few seconds; per render it would be several).
    const all = (await Promise.all(KUSTOMIZATIONS.map((dir) => render(dir)))).flat();
    expect(unknownFields(all)).toEqual([]);
  }, 60_000);

  test.each(KUSTOMIZATIONS)('%s: selectors select their pods; images carry a tag', async (dir) => {
    expect(selectorProblems(await render(dir))).toEqual([]);
    expect(imageProblems(await render(dir))).toEqual([]);
  });
});

describe.each(['k8s/overlays/dev', 'k8s/overlays/production'] as const)('%s', (overlay) => {
  test('has one coordinator with a Service, a PodDisruptionBudget and /healthz probes', async () => {
    expect(coordinatorProblems(await render(overlay))).toEqual([]);
  });

  test('drains its workers within the grace period, GPU classes on GFD labels, secrets from Secrets', async () => {
    expect(workerProblems(await render(overlay))).toEqual([]);
  });

  test('puts every object in the flowfleet namespace', async () => {
    const namespaced = (await render(overlay)).filter((doc) => doc['kind'] !== 'Namespace');
    const namespaces = new Set(
      namespaced.map((doc) => (doc['metadata'] as { namespace?: string }).namespace),
    );
    expect([...namespaces]).toEqual(['flowfleet']);
  });
});

describe('autoscaling by capability (KEDA)', () => {
  test('production: one ScaledObject per worker Deployment on GET /v1/scaling of its class', async () => {
    const docs = await render('k8s/overlays/production');
    expect(scalingProblems(docs)).toEqual([]);
    expect(
      workerDeployments(docs)
        .map((d) => d.metadata?.name)
        .sort(),
    ).toEqual(['flowfleet-worker-cpu', 'flowfleet-worker-cuda-sm80', 'flowfleet-worker-cuda-sm90']);
  });

  test('dev runs without KEDA: no KEDA objects, fixed worker replicas', async () => {
    const docs = await render('k8s/overlays/dev');
    expect(docs.filter((doc) => String(doc['apiVersion']).startsWith('keda.sh/'))).toEqual([]);
    expect(workerDeployments(docs).map((d) => d.spec?.replicas)).toEqual([2]);
  });
});
