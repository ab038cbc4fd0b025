import { KNOWN_KINDS } from './k8s-kinds.js';
import { objectId, type YamlObject } from './manifests.js';

/**
 * Schema problems of one object: its kind's kubernetes-models validator (the Kubernetes OpenAPI,
 * or KEDA's keda.sh/v1alpha1 API for ScaledObject and TriggerAuthentication), or "no schema"
 * for a kind outside KNOWN_KINDS. Empty when it validates.
 */
export function schemaErrors(doc: YamlObject): string[] {
  const kind = KNOWN_KINDS.find(
    (k) => k.kind === doc['kind'] && k.apiVersion === doc['apiVersion'],
  );
  if (kind === undefined) {
    return [`${objectId(doc)}: no schema for ${String(doc['apiVersion'])} ${String(doc['kind'])}`];
  }
  try {
    kind.validate(doc);
    return [];
  } catch (error) {
    return [`${objectId(doc)}: ${(error as Error).message}`];
  }
}
