// Each validator the infra tests rely on, shown to reject a broken document: a check that could
// not fail would prove nothing about the real manifests.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { composeProblems } from './support/compose-rules.js';
import {
  composeSchemaErrors,
  exampleEnv,
  interpolateCompose,
  loadCompose,
} from './support/compose-schema.js';
import { lintDockerfile } from './support/dockerfile-lint.js';
import {
  coordinatorProblems,
  scalingProblems,
  selectorProblems,
  workerProblems,
} from './support/fleet-rules.js';
import { schemaErrors } from './support/k8s-schemas.js';
import { unknownFields } from './support/k8s-unknown-fields.js';
import { infraPath, renderKustomization, type YamlObject } from './support/manifests.js';

let production: YamlObject[];
beforeAll(async () => {
  production = await renderKustomization(infraPath('k8s/overlays/production'));
});

/**
 * A parsed YAML tree edited into shapes no type allows (that is the point of these tests), so
 * it is typed loosely on purpose.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** A deep copy of the production render with one object changed. */
function changed(kind: string, name: string, change: (doc: Loose) => void): YamlObject[] {
  const docs = structuredClone(production);
  const doc = docs.find(
    (d) => d['kind'] === kind && (d['metadata'] as { name: string }).name === name,
  );
  if (doc === undefined) throw new Error(`${kind}/${name} not in the render`);
  change(doc);
  return docs;
}

describe('the Kubernetes and KEDA schemas', () => {
  test('reject a Deployment with a string containerPort and a bad pull policy', () => {
    const [deployment] = changed('Deployment', 'flowfleet-coordinator', (d) => {
      d.spec.template.spec.containers[0].ports[0].containerPort = 'http';
      d.spec.template.spec.containers[0].imagePullPolicy = 'Sometimes';
    }).filter(
      (d) =>
        (d['metadata'] as { name: string }).name === 'flowfleet-coordinator' &&
        d['kind'] === 'Deployment',
    );
    expect(schemaErrors(deployment!).join('\n')).toMatch(/containerPort must be integer/);
  });

  test('reject a ScaledObject whose minReplicaCount is text and whose trigger metadata is a number', () => {
    const docs = changed('ScaledObject', 'flowfleet-worker-cuda-sm90', (d) => {
      d.spec.minReplicaCount = 'zero';
      d.spec.triggers[0].metadata.targetValue = 1;
    });
    const errors = docs.flatMap(schemaErrors).join('\n');
    expect(errors).toMatch(
      /ScaledObject\/flowfleet-worker-cuda-sm90: .*minReplicaCount must be integer/,
    );
  });

  test('reject a TriggerAuthentication secretTargetRef without its key', () => {
    const docs = changed('TriggerAuthentication', 'flowfleet-scaling-reader', (d) => {
      delete d.spec.secretTargetRef[0].key;
    });
    expect(docs.flatMap(schemaErrors).join('\n')).toMatch(
      /TriggerAuthentication.*must have required property key/,
    );
  });

  test('reject a kind they have no schema for', () => {
    expect(
      schemaErrors({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    ).toEqual(['Widget/w: no schema for example.com/v1 Widget']);
  });

  test('the unknown-field check reports a misspelt field the schemas let through', () => {
    const docs = changed('Deployment', 'flowfleet-worker-cuda-sm90', (d) => {
      d.spec.template.spec.nodeSelecter = d.spec.template.spec.nodeSelector;
      delete d.spec.template.spec.nodeSelector;
    });
    expect(docs.flatMap(schemaErrors)).toEqual([]); // the schemas accept it …
    const problems = unknownFields(docs);
    expect(problems).toHaveLength(1); // … the declarations do not
    expect(problems[0]).toMatchObject({ object: 'Deployment/flowfleet-worker-cuda-sm90' });
    expect(problems[0]!.message).toMatch(/nodeSelecter/);
  }, 60_000);
});

describe('kustomize rendering', () => {
  test('fails on a kustomization naming a resource that does not exist', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'flowfleet-kustomize-'));
    try {
      await writeFile(path.join(dir, 'kustomization.yaml'), 'resources:\n  - missing.yaml\n');
      await expect(renderKustomization(dir)).rejects.toThrow(
        /kubectl kustomize .* failed: .*missing\.yaml/s,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the fleet rules', () => {
  test('a worker whose grace period does not cover preStop + drain + slack', () => {
    const docs = changed('Deployment', 'flowfleet-worker-cpu', (d) => {
      d.spec.template.spec.terminationGracePeriodSeconds = 45;
    });
    expect(workerProblems(docs)).toEqual([
      'Deployment/flowfleet-worker-cpu: terminationGracePeriodSeconds 45 must exceed preStop + drain + slack = 50 s',
    ]);
  });

  test('a worker without preStop, a token literal, an unknown variable', () => {
    const docs = changed('Deployment', 'flowfleet-worker-cpu', (d) => {
      const container = d.spec.template.spec.containers[0];
      delete container.lifecycle;
      const token = container.env.findIndex(
        (e: { name: string }) => e.name === 'FLOWFLEET_WORKER_TOKEN',
      );
      container.env[token] = { name: 'FLOWFLEET_WORKER_TOKEN', value: 'x'.repeat(20) };
      container.env.push({ name: 'FLOWFLEET_CONCURENCY', value: '4' });
    });
    const problems = workerProblems(docs).join('\n');
    expect(problems).toMatch(/no preStop hook/);
    expect(problems).toMatch(/FLOWFLEET_WORKER_TOKEN must come from a Secret/);
    expect(problems).toMatch(/FLOWFLEET_CONCURENCY is not a variable the app reads/);
  });

  test('a CUDA class on the wrong compute capability, or without a GPU', () => {
    const docs = changed('Deployment', 'flowfleet-worker-cuda-sm80', (d) => {
      d.spec.template.spec.nodeSelector['nvidia.com/gpu.compute.major'] = '9';
      delete d.spec.template.spec.containers[0].resources.limits['nvidia.com/gpu'];
    });
    const problems = workerProblems(docs).join('\n');
    expect(problems).toMatch(/major\/minor must be 8\/0 for cuda\/sm80/);
    expect(problems).toMatch(/no nvidia.com\/gpu limit/);
  });

  test('a coordinator probed elsewhere than /healthz, and a PDB that selects nothing', () => {
    const docs = changed('Deployment', 'flowfleet-coordinator', (d) => {
      d.spec.template.spec.containers[0].livenessProbe.httpGet.path = '/metrics';
    });
    expect(coordinatorProblems(docs)).toEqual([
      'Deployment/flowfleet-coordinator: livenessProbe must GET /healthz on port 8080',
    ]);
    const orphan = changed('PodDisruptionBudget', 'flowfleet-coordinator', (d) => {
      d.spec.selector.matchLabels['app.kubernetes.io/component'] = 'coordinatr';
    });
    expect(selectorProblems(orphan)).toEqual([
      'PodDisruptionBudget/flowfleet-coordinator: selects no pods',
    ]);
    expect(coordinatorProblems(orphan)).toEqual([
      'Deployment/flowfleet-coordinator: no PodDisruptionBudget covers it',
    ]);
  });

  test('a ScaledObject asking for another class, reading the wrong field or targeting nothing', () => {
    const wrongClass = changed('ScaledObject', 'flowfleet-worker-cuda-sm80', (d) => {
      d.spec.triggers[0].metadata.url = d.spec.triggers[0].metadata.url.replace('sm80', 'sm90');
      d.spec.triggers[0].metadata.valueLocation = 'classes.0.workers';
    });
    const problems = scalingProblems(wrongClass).join('\n');
    expect(problems).toMatch(/url .*sm90 should be .*deviceClass=cuda%2Fsm80/);
    expect(problems).toMatch(/valueLocation must be classes.0.desiredReplicas/);
    const orphan = changed('ScaledObject', 'flowfleet-worker-cpu', (d) => {
      d.spec.scaleTargetRef.name = 'flowfleet-worker';
    });
    expect(scalingProblems(orphan)).toEqual([
      'Deployment/flowfleet-worker-cpu: 0 ScaledObjects target it (want 1)',
      'ScaledObject/flowfleet-worker-cpu: targets no worker Deployment of this render',
    ]);
  });
});

describe('the compose checks', () => {
  const compose = loadCompose({
    ...exampleEnv(),
    FLOWFLEET_TRAINER_TOKEN: 'trainer-0123456789abcdef',
    FLOWFLEET_VIEWER_TOKEN: 'viewer-0123456789abcdef',
    FLOWFLEET_WORKER_TOKEN: 'worker-0123456789abcdef',
  });

  test('the compose-spec schema rejects a misspelt key and a wrong type', () => {
    const broken = structuredClone(compose) as Loose;
    broken.services.worker.stop_grace_periood = '60s';
    broken.services.redis.healthcheck.retries = 'many';
    broken.services.coordinator.ports = ['eighty:8080'];
    broken.services.redis.healthcheck.interval = '5 seconds';
    const errors = composeSchemaErrors(broken).join('\n');
    expect(errors).toMatch(/\/services\/coordinator\/ports\/0 must match format "ports"/);
    expect(errors).toMatch(/\/services\/redis\/healthcheck\/interval must match format "duration"/);
    expect(errors).toMatch(
      /\/services\/worker must NOT have additional properties .*stop_grace_periood/,
    );
    expect(errors).toMatch(/\/services\/redis\/healthcheck\/retries must be number/);
  });

  test('interpolation keeps defaults, fills values and refuses a required variable left empty', () => {
    const text = 'a: ${A:-8080}\nb: ${B:?set B}\nc: $${LITERAL}\n';
    expect(interpolateCompose(text, { B: 'x' })).toBe('a: 8080\nb: x\nc: ${LITERAL}\n');
    expect(() => interpolateCompose(text, { B: '' })).toThrow(/required variable B .*set B/);
  });

  test('the compose rules reject an unscalable or undrainable worker', () => {
    const broken = structuredClone(compose) as Loose;
    broken.services.worker.container_name = 'worker';
    broken.services.worker.stop_grace_period = '30s';
    broken.services.coordinator.image = 'flowfleet/coordinator';
    expect(composeProblems(broken)).toEqual([
      'coordinator: image flowfleet/coordinator has no pinned tag',
      'worker: container_name blocks --scale',
      'worker: stop_grace_period 30s must exceed drain + slack = 45 s',
    ]);
  });
});

describe('the Dockerfile lint', () => {
  test('flags latest, ADD of a URL, root, no HEALTHCHECK and a shell-form CMD', () => {
    const findings = lintDockerfile(
      [
        'FROM node:latest',
        'ADD https://example.com/x.tgz /x',
        'EXPOSE abc',
        'CMD npm run worker',
        '',
      ].join('\n'),
    );
    const rules = findings.map((f) => f.rule);
    expect(rules.filter((rule) => !rule.startsWith('dockerfile-utils:')).sort()).toEqual([
      'exec-form',
      'healthcheck',
      'no-add-url',
      'non-root-user',
      'pinned-base-image',
    ]);
    // EXPOSE abc: dockerfile-utils' own argument check.
    expect(findings.find((f) => f.rule.startsWith('dockerfile-utils:'))).toMatchObject({ line: 3 });
  });

  test('a real Dockerfile with its USER removed fails', () => {
    const text = readFileSync(infraPath('docker', 'worker-cpu.Dockerfile'), 'utf8').replace(
      /^USER .*$/m,
      '',
    );
    expect(lintDockerfile(text).map((f) => f.rule)).toEqual(['non-root-user']);
  });
});
