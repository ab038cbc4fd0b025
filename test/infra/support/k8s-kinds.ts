import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';

/** One kind the manifests may use: its schema validator and its TypeScript interface. */
export interface KnownKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** The kubernetes-models / @kubernetes-models/keda validator (ajv, from the OpenAPI / CRD). */
  readonly validate: (data: unknown) => void;
  /** Module and interface name of the generated declaration (for the unknown-field check). */
  readonly typeModule: string;
  readonly typeName: string;
}

interface ModelClass {
  readonly apiVersion: string;
  readonly kind: string;
  new (data: never): { validate(): void };
}

function known(model: ModelClass, typeModule: string): KnownKind {
  return {
    apiVersion: model.apiVersion,
    kind: model.kind,
    validate: (data) => new model(data as never).validate(),
    typeModule,
    typeName: `I${model.kind}`,
  };
}

/**
 * Every kind infra/k8s uses. A manifest of any other kind fails validation ("no schema"), so a
 * new kind cannot slip in unchecked.
 */
export const KNOWN_KINDS: readonly KnownKind[] = [
  known(Deployment, 'kubernetes-models/apps/v1/Deployment'),
  known(StatefulSet, 'kubernetes-models/apps/v1/StatefulSet'),
  known(Service, 'kubernetes-models/v1/Service'),
  known(ConfigMap, 'kubernetes-models/v1/ConfigMap'),
  known(Secret, 'kubernetes-models/v1/Secret'),
  known(Namespace, 'kubernetes-models/v1/Namespace'),
  known(PersistentVolumeClaim, 'kubernetes-models/v1/PersistentVolumeClaim'),
  known(PodDisruptionBudget, 'kubernetes-models/policy/v1/PodDisruptionBudget'),
  known(ScaledObject, '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject'),
  known(TriggerAuthentication, '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication'),
];
