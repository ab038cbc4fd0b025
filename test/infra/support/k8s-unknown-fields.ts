import path from 'node:path';
import ts from 'typescript';
import { KNOWN_KINDS } from './k8s-kinds.js';
import { objectId, REPO_ROOT, type YamlObject } from './manifests.js';

/** One field a manifest sets that its kind's declaration does not have. */
export interface FieldProblem {
  /** `Kind/name` of the object. */
  readonly object: string;
  readonly message: string;
}

const VIRTUAL_FILE = path.join(REPO_ROOT, 'test/infra/support/__manifests__.ts');

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2023,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
  // The declarations need only ES5's built-ins; the full default lib would triple the time.
  lib: ['lib.es5.d.ts'],
};

/**
 * The fields each object sets that the Kubernetes OpenAPI (or KEDA API) declarations do not
 * know: the schemas allow unknown properties (so does the API server, which drops or warns), so
 * a misspelt `nodeSelecter` would pass them. Each object becomes an object literal typed as its
 * kind's kubernetes-models interface, and TypeScript's excess-property check reports what is
 * left over. Objects of unknown kinds are reported too.
 */
export function unknownFields(docs: readonly YamlObject[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const lines: string[] = [];
  const lineOwners: string[] = [];
  const imports = new Set<string>();
  docs.forEach((doc, index) => {
    const kind = KNOWN_KINDS.find(
      (k) => k.kind === doc['kind'] && k.apiVersion === doc['apiVersion'],
    );
    if (kind === undefined) {
      problems.push({ object: objectId(doc), message: 'no schema for this apiVersion/kind' });
      return;
    }
    const alias = `T${KNOWN_KINDS.indexOf(kind)}`;
    imports.add(`import type { ${kind.typeName} as ${alias} } from '${kind.typeModule}';`);
    // One property per line, so a diagnostic's line names its object.
    const literal = JSON.stringify(doc, null, 1).split('\n');
    const start = lines.length;
    lines.push(`export const doc${index}: ${alias} = ${literal[0]}`, ...literal.slice(1));
    for (let line = start; line < lines.length; line++) lineOwners[line] = objectId(doc);
  });
  const header = [...imports];
  const text = [...header, ...lines].join('\n');
  const host = ts.createCompilerHost(OPTIONS);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => (file === VIRTUAL_FILE ? text : readFile(file));
  host.getSourceFile = (file, language) =>
    file === VIRTUAL_FILE
      ? ts.createSourceFile(file, text, language, true, ts.ScriptKind.TS)
      : getSourceFile(file, language);
  const program = ts.createProgram([VIRTUAL_FILE], OPTIONS, host);
  const source = program.getSourceFile(VIRTUAL_FILE);
  if (source === undefined) throw new Error('the virtual manifest file did not load');
  for (const diagnostic of ts.getPreEmitDiagnostics(program, source)) {
    const line =
      diagnostic.start === undefined
        ? -1
        : source.getLineAndCharacterOfPosition(diagnostic.start).line - header.length;
    problems.push({
      object: lineOwners[line] ?? '(imports)',
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    });
  }
  return problems;
}
