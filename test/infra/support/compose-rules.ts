import { coordinatorEnvSchema } from '@flowfleet/coordinator';
import { workerEnvSchema } from '@flowfleet/worker';
import { WORKER_SHUTDOWN_SLACK_S } from './fleet-rules.js';
import type { YamlObject } from './manifests.js';

interface ComposeService {
  readonly image?: string;
  readonly container_name?: string;
  readonly ports?: unknown[];
  readonly environment?: Record<string, string>;
  readonly stop_grace_period?: string;
  readonly healthcheck?: unknown;
  readonly depends_on?: Record<string, { condition?: string }>;
  readonly command?: string[];
}

/** `1m30s`, `60s`, `100s` → seconds (compose's duration syntax, the units used here). */
function seconds(duration: string | undefined): number {
  if (duration === undefined) return 10; // compose's default stop grace period
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (match === null || duration === '') throw new Error(`unparsed duration ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

/**
 * Compose rules the schema cannot state: workers scale (no container_name, no published port)
 * and get longer than drain + slack to stop; images pinned; Redis mounts redis.conf and has a
 * health check the coordinator waits for; the apps' variables are ones their env schemas read.
 */
export function composeProblems(compose: YamlObject): string[] {
  const services = (compose['services'] ?? {}) as Record<string, ComposeService>;
  const problems: string[] = [];
  const known = {
    coordinator: new Set(Object.keys(coordinatorEnvSchema.shape)),
    worker: new Set(Object.keys(workerEnvSchema.shape)),
  };
  for (const [name, service] of Object.entries(services)) {
    if (!/:[^/:]+$/.test(service.image ?? '') || service.image?.endsWith(':latest') === true) {
      problems.push(`${name}: image ${service.image} has no pinned tag`);
    }
    const role =
      name === 'coordinator' ? 'coordinator' : name.startsWith('worker') ? 'worker' : undefined;
    if (role === undefined) continue;
    for (const variable of Object.keys(service.environment ?? {})) {
      if (!known[role].has(variable))
        problems.push(`${name}: ${variable} is not a variable the ${role} reads`);
    }
    if (role === 'worker') {
      if (service.container_name !== undefined)
        problems.push(`${name}: container_name blocks --scale`);
      if (service.ports !== undefined) problems.push(`${name}: a published port blocks --scale`);
      const drainMs = Number(service.environment?.['FLOWFLEET_DRAIN_TIMEOUT_MS'] ?? 25_000);
      const needed = drainMs / 1000 + WORKER_SHUTDOWN_SLACK_S;
      if (!(seconds(service.stop_grace_period) > needed)) {
        problems.push(
          `${name}: stop_grace_period ${service.stop_grace_period} must exceed drain + slack = ${needed} s`,
        );
      }
    }
  }
  const redis = services['redis'];
  if (redis?.healthcheck === undefined) problems.push('redis: no healthcheck');
  if (!(redis?.command ?? []).some((arg) => arg.endsWith('redis.conf')))
    problems.push('redis: not started with redis.conf');
  if (services['coordinator']?.depends_on?.['redis']?.condition !== 'service_healthy') {
    problems.push('coordinator: must wait for a healthy redis');
  }
  return problems;
}
