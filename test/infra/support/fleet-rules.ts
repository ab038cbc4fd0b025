import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { ITriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IService } from 'kubernetes-models/v1/Service';
import { coordinatorEnvSchema } from '@flowfleet/coordinator';
import { workerEnvSchema } from '@flowfleet/worker';
import { objectId, type YamlObject } from './manifests.js';

/** What apps/worker/src/main.ts allows the shutdown past the drain bound (SHUTDOWN_SLACK_MS). */
export const WORKER_SHUTDOWN_SLACK_S = 20;
/** Env vars the platform package reads on its own (README "Configuration"). */
const PLATFORM_ENV = ['FLOWFLEET_ORT_CUDA_PROVIDER'];
const COORDINATOR_ENV = new Set(Object.keys(coordinatorEnvSchema.shape));
const WORKER_ENV = new Set([...Object.keys(workerEnvSchema.shape), ...PLATFORM_ENV]);
/** Variables that carry credentials: never a literal in a manifest. */
const SECRET_ENV = /(_TOKEN|^REDIS_URL)$/;

function ofKind<T>(docs: readonly YamlObject[], kind: string): T[] {
  return docs.filter((doc) => doc['kind'] === kind) as unknown as T[];
}

function component(deployment: IDeployment): string | undefined {
  return deployment.spec?.template.metadata?.labels?.['app.kubernetes.io/component'];
}

/** The worker Deployments of a render. */
export function workerDeployments(docs: readonly YamlObject[]): IDeployment[] {
  return ofKind<IDeployment>(docs, 'Deployment').filter((d) => component(d) === 'worker');
}

function podSpec(deployment: IDeployment): IPodSpec {
  const spec = deployment.spec?.template.spec;
  if (spec === undefined) throw new Error(`${deployment.metadata?.name ?? '?'} has no pod spec`);
  return spec;
}

function matches(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (selector === undefined || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** Every selector selects pods of this render, and every Deployment's selector its template. */
export function selectorProblems(docs: readonly YamlObject[]): string[] {
  const problems: string[] = [];
  const deployments = [
    ...ofKind<IDeployment>(docs, 'Deployment'),
    ...ofKind<IDeployment>(docs, 'StatefulSet'),
  ];
  const podLabels = deployments.map((d) => d.spec?.template.metadata?.labels);
  for (const d of deployments) {
    if (!matches(d.spec?.selector.matchLabels, d.spec?.template.metadata?.labels)) {
      problems.push(`${d.kind}/${d.metadata?.name}: selector does not match its pod template`);
    }
  }
  for (const d of ofKind<IDeployment>(docs, 'Deployment')) {
    const others = deployments.filter(
      (o) => o !== d && matches(d.spec?.selector.matchLabels, o.spec?.template.metadata?.labels),
    );
    if (others.length > 0)
      problems.push(
        `Deployment/${d.metadata?.name}: selector also matches ${others.map((o) => o.metadata?.name).join(', ')}`,
      );
  }
  for (const service of ofKind<IService>(docs, 'Service')) {
    if (!podLabels.some((labels) => matches(service.spec?.selector, labels))) {
      problems.push(`Service/${service.metadata?.name}: selects no pods`);
    }
  }
  for (const pdb of ofKind<IPodDisruptionBudget>(docs, 'PodDisruptionBudget')) {
    if (!podLabels.some((labels) => matches(pdb.spec?.selector?.matchLabels, labels))) {
      problems.push(`PodDisruptionBudget/${pdb.metadata?.name}: selects no pods`);
    }
  }
  return problems;
}

function envProblems(owner: string, container: IContainer, known: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const variable of container.env ?? []) {
    if (!known.has(variable.name))
      problems.push(`${owner}: ${variable.name} is not a variable the app reads`);
    if (SECRET_ENV.test(variable.name) && variable.valueFrom?.secretKeyRef === undefined) {
      problems.push(`${owner}: ${variable.name} must come from a Secret (secretKeyRef)`);
    }
  }
  return problems;
}

function env(container: IContainer, name: string): IEnvVar | undefined {
  return container.env?.find((variable) => variable.name === name);
}

function preStopSeconds(container: IContainer): number | undefined {
  const command = container.lifecycle?.preStop?.exec?.command;
  if (command?.[0] !== 'sleep') return command === undefined ? undefined : 0;
  return Number(command[1]);
}

/**
 * The coordinator: a PodDisruptionBudget and a Service for it, readiness and liveness probes on
 * GET /healthz at its listening port, listening on every interface, tokens and REDIS_URL from
 * Secrets, and only variables its env schema reads.
 */
export function coordinatorProblems(docs: readonly YamlObject[]): string[] {
  const coordinators = ofKind<IDeployment>(docs, 'Deployment').filter(
    (d) => component(d) === 'coordinator',
  );
  if (coordinators.length !== 1)
    return [`expected one coordinator Deployment, found ${coordinators.length}`];
  const deployment = coordinators[0]!;
  const name = `Deployment/${deployment.metadata?.name}`;
  const container = podSpec(deployment).containers[0]!;
  const problems = envProblems(name, container, COORDINATOR_ENV);
  const port = Number(env(container, 'FLOWFLEET_PORT')?.value ?? 8080);
  if (env(container, 'FLOWFLEET_HOST')?.value !== '0.0.0.0')
    problems.push(`${name}: FLOWFLEET_HOST must be 0.0.0.0 in a pod`);
  const namedPort = container.ports?.find((p) => p.containerPort === port);
  if (namedPort === undefined) problems.push(`${name}: no container port ${port}`);
  for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
    const get = container[probe]?.httpGet;
    const target = get?.port === namedPort?.name ? port : Number(get?.port);
    if (get?.path !== '/healthz' || target !== port)
      problems.push(`${name}: ${probe} must GET /healthz on port ${port}`);
  }
  if (preStopSeconds(container) === undefined) problems.push(`${name}: no preStop hook`);
  const labels = deployment.spec?.template.metadata?.labels;
  if (
    !ofKind<IPodDisruptionBudget>(docs, 'PodDisruptionBudget').some((p) =>
      matches(p.spec?.selector?.matchLabels, labels),
    )
  ) {
    problems.push(`${name}: no PodDisruptionBudget covers it`);
  }
  if (!ofKind<IService>(docs, 'Service').some((s) => matches(s.spec?.selector, labels)))
    problems.push(`${name}: no Service selects it`);
  return problems;
}

/**
 * Every worker Deployment: a preStop hook and a terminationGracePeriodSeconds longer than
 * preStop + FLOWFLEET_DRAIN_TIMEOUT_MS + the worker's shutdown slack; a device-class label; for
 * a CUDA class, GPU Feature Discovery nodeSelectors matching the class and a GPU limit; secrets
 * from Secrets; only variables the worker reads.
 */
export function workerProblems(docs: readonly YamlObject[]): string[] {
  const workers = workerDeployments(docs);
  if (workers.length === 0) return ['no worker Deployment'];
  return workers.flatMap((deployment) => {
    const name = `Deployment/${deployment.metadata?.name}`;
    const spec = podSpec(deployment);
    const container = spec.containers[0]!;
    const problems = envProblems(name, container, WORKER_ENV);
    const preStop = preStopSeconds(container);
    if (preStop === undefined) problems.push(`${name}: no preStop hook`);
    const drainMs = Number(
      env(container, 'FLOWFLEET_DRAIN_TIMEOUT_MS')?.value ??
        workerEnvSchema.shape.FLOWFLEET_DRAIN_TIMEOUT_MS.parse(undefined),
    );
    const needed = (preStop ?? 0) + drainMs / 1000 + WORKER_SHUTDOWN_SLACK_S;
    const grace = spec.terminationGracePeriodSeconds ?? 30;
    if (!(grace > needed))
      problems.push(
        `${name}: terminationGracePeriodSeconds ${grace} must exceed preStop + drain + slack = ${needed} s`,
      );
    const deviceClass = deviceClassOf(deployment);
    if (deviceClass === undefined) problems.push(`${name}: no flowfleet.dev/device-class label`);
    if (deviceClass?.startsWith('cuda/') === true) {
      const [, major = '', minor = ''] = /^cuda\/sm(\d+)(\d)$/.exec(deviceClass) ?? [];
      const selector = spec.nodeSelector ?? {};
      if (
        selector['nvidia.com/gpu.compute.major'] !== major ||
        selector['nvidia.com/gpu.compute.minor'] !== minor
      ) {
        problems.push(
          `${name}: nodeSelector nvidia.com/gpu.compute.major/minor must be ${major}/${minor} for ${deviceClass}`,
        );
      }
      if (String(container.resources?.limits?.['nvidia.com/gpu'] ?? '') === '')
        problems.push(`${name}: no nvidia.com/gpu limit`);
    }
    return problems;
  });
}

/** `cuda-sm90` (a label value, no `/` allowed) → `cuda/sm90`, the /v1/scaling device class. */
export function deviceClassOf(deployment: IDeployment): string | undefined {
  const label = deployment.spec?.template.metadata?.labels?.['flowfleet.dev/device-class'];
  return label?.replace('-', '/');
}

/**
 * KEDA: exactly one ScaledObject per worker Deployment, reading GET /v1/scaling for that
 * Deployment's device class from the coordinator Service in the object's namespace, with the
 * contract's trigger (classes.0.desiredReplicas, AverageValue, targetValue 1), bearer auth
 * from a TriggerAuthentication holding the viewer token, min ≤ max and a cooldown.
 */
export function scalingProblems(docs: readonly YamlObject[]): string[] {
  const problems: string[] = [];
  const scaled = ofKind<IScaledObject>(docs, 'ScaledObject');
  const auths = ofKind<ITriggerAuthentication>(docs, 'TriggerAuthentication');
  const services = ofKind<IService>(docs, 'Service');
  const coordinatorService = services.find(
    (s) => s.spec?.selector?.['app.kubernetes.io/component'] === 'coordinator',
  );
  for (const deployment of workerDeployments(docs)) {
    const name = `Deployment/${deployment.metadata?.name}`;
    const mine = scaled.filter((s) => s.spec.scaleTargetRef.name === deployment.metadata?.name);
    if (mine.length !== 1) {
      problems.push(`${name}: ${mine.length} ScaledObjects target it (want 1)`);
      continue;
    }
    const object = mine[0]!;
    const id = `ScaledObject/${object.metadata?.name}`;
    const { minReplicaCount = 0, maxReplicaCount = 100, cooldownPeriod } = object.spec;
    if (minReplicaCount > maxReplicaCount)
      problems.push(`${id}: minReplicaCount > maxReplicaCount`);
    if (cooldownPeriod === undefined) problems.push(`${id}: no cooldownPeriod`);
    const trigger = object.spec.triggers[0];
    if (object.spec.triggers.length !== 1 || trigger?.type !== 'metrics-api') {
      problems.push(`${id}: want exactly one metrics-api trigger`);
      continue;
    }
    const metadata = trigger.metadata;
    const namespace = object.metadata?.namespace ?? 'default';
    const servicePort = coordinatorService?.spec?.ports?.[0]?.port;
    const expected = `http://${coordinatorService?.metadata?.name}.${namespace}.svc:${servicePort}/v1/scaling?deviceClass=${encodeURIComponent(deviceClassOf(deployment) ?? '')}`;
    if (metadata['url'] !== expected)
      problems.push(`${id}: url ${metadata['url']} should be ${expected}`);
    if (metadata['valueLocation'] !== 'classes.0.desiredReplicas')
      problems.push(`${id}: valueLocation must be classes.0.desiredReplicas`);
    if (metadata['targetValue'] !== '1' || trigger.metricType !== 'AverageValue') {
      problems.push(
        `${id}: replicas = desiredReplicas needs metricType AverageValue and targetValue "1"`,
      );
    }
    if (metadata['authMode'] !== 'bearer') problems.push(`${id}: authMode must be bearer`);
    const auth = auths.find((a) => a.metadata?.name === trigger.authenticationRef?.name);
    const token = auth?.spec?.secretTargetRef?.find((ref) => ref.parameter === 'token');
    if (token?.name !== 'flowfleet-tokens' || token.key !== 'viewer') {
      problems.push(
        `${id}: its TriggerAuthentication must give parameter token = flowfleet-tokens/viewer`,
      );
    }
  }
  problems.push(...declaredClassProblems(docs, scaled));
  for (const object of scaled) {
    if (
      !workerDeployments(docs).some((d) => d.metadata?.name === object.spec.scaleTargetRef.name)
    ) {
      problems.push(
        `ScaledObject/${object.metadata?.name}: targets no worker Deployment of this render`,
      );
    }
  }
  return problems;
}

/**
 * Every class a ScaledObject scales is declared in the coordinator's FLOWFLEET_SCALING_CLASSES
 * with the ScaledObject's own bounds: GET /v1/scaling answers 404 for a class it has neither
 * configured nor seen, so a class at zero replicas would never wake up.
 */
function declaredClassProblems(
  docs: readonly YamlObject[],
  scaled: readonly IScaledObject[],
): string[] {
  if (scaled.length === 0) return [];
  const coordinator = ofKind<IDeployment>(docs, 'Deployment').find(
    (d) => d.spec?.template.metadata?.labels?.['app.kubernetes.io/component'] === 'coordinator',
  );
  const raw = coordinator?.spec?.template.spec?.containers[0]?.env?.find(
    (e) => e.name === 'FLOWFLEET_SCALING_CLASSES',
  )?.value;
  if (raw === undefined) return ['coordinator: FLOWFLEET_SCALING_CLASSES is not set'];
  const parsed = coordinatorEnvSchema.shape.FLOWFLEET_SCALING_CLASSES.safeParse(raw);
  if (!parsed.success)
    return [`coordinator: FLOWFLEET_SCALING_CLASSES is invalid: ${parsed.error.message}`];
  const declared = JSON.parse(raw) as Record<
    string,
    { minReplicas?: number; maxReplicas?: number }
  >;
  const problems: string[] = [];
  for (const object of scaled) {
    const url = new URL(String(object.spec.triggers[0]?.metadata['url'] ?? 'http://invalid/'));
    const deviceClass = url.searchParams.get('deviceClass') ?? '';
    const bounds = declared[deviceClass];
    const id = `ScaledObject/${object.metadata?.name}`;
    if (bounds === undefined) {
      problems.push(
        `${id}: class ${deviceClass} is not in the coordinator's FLOWFLEET_SCALING_CLASSES`,
      );
    } else if (
      bounds.minReplicas !== (object.spec.minReplicaCount ?? 0) ||
      bounds.maxReplicas !== (object.spec.maxReplicaCount ?? 100)
    ) {
      problems.push(`${id}: bounds differ from FLOWFLEET_SCALING_CLASSES[${deviceClass}]`);
    }
  }
  return problems;
}

/** Every container image names a tag (the overlays' `images:` pin them). */
export function imageProblems(docs: readonly YamlObject[]): string[] {
  const kinds = [
    ...ofKind<IDeployment>(docs, 'Deployment'),
    ...ofKind<IDeployment>(docs, 'StatefulSet'),
  ];
  return kinds.flatMap((d) =>
    podSpec(d)
      .containers.filter(
        (c) => !/:[^/:]+$/.test(c.image ?? '') || (c.image ?? '').endsWith(':latest'),
      )
      .map((c) => `${objectId(d as unknown as YamlObject)}: image ${c.image} has no pinned tag`),
  );
}
