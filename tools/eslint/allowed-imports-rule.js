// ESLint rule `flowfleet/allowed-imports`: enforces the package import graph (DESIGN.md §1).
import path from 'node:path';
import { ALLOWED_IMPORTS, RESTRICTED_MODULES } from './import-rules.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const FREE_ZONES = ['test', 'bench', 'scripts', 'tools', 'examples'];

/** The workspace ("packages/x", "apps/y") or free zone ("test") that a file belongs to. */
export function zoneOf(file) {
  const rel = path.relative(ROOT, path.resolve(file)).split(path.sep);
  if ((rel[0] === 'packages' || rel[0] === 'apps') && rel.length > 2) return `${rel[0]}/${rel[1]}`;
  if (FREE_ZONES.includes(rel[0] ?? '')) return rel[0];
  return undefined;
}

function check(context, node, specifier, { isTypeOnly, isDynamic }) {
  const file = context.filename;
  const zone = zoneOf(file);
  if (zone === undefined || typeof specifier !== 'string') return;
  const report = (message) => context.report({ node, message });

  if (specifier.startsWith('.')) {
    const target = zoneOf(path.resolve(path.dirname(file), specifier));
    if (target !== zone) {
      if (target !== undefined && FREE_ZONES.includes(target) && !FREE_ZONES.includes(zone)) {
        report(`'${zone}' may not import from '${target}/' (nothing imports tests or benchmarks)`);
      } else if (!FREE_ZONES.includes(zone) || target?.includes('/')) {
        report(
          `relative import '${specifier}' leaves '${zone}'; import the package by its name instead`,
        );
      }
    }
    return;
  }

  const ff = /^@flowfleet\/([^/]+)(\/.*)?$/.exec(specifier);
  if (ff) {
    const [, pkg, sub] = ff;
    if (sub !== undefined && /^\/(src|dist)(\/|$)/.test(sub)) {
      report(`deep import '${specifier}': use the package's exports map`);
    }
    if (FREE_ZONES.includes(zone)) return;
    const self = zone.split('/')[1];
    if (pkg === self) return;
    const allowed = ALLOWED_IMPORTS[zone] ?? [];
    if (!allowed.includes(pkg)) {
      report(
        `'${zone}' may not import '@flowfleet/${pkg}' (allowed: ${allowed.join(', ') || 'nothing'}; DESIGN.md §1)`,
      );
    }
    return;
  }

  const restricted = RESTRICTED_MODULES[specifier];
  if (restricted && !isTypeOnly) {
    if (zone !== restricted.only && !FREE_ZONES.includes(zone)) {
      report(`only '${restricted.only}' may load '${specifier}'`);
    } else if (restricted.lazy && !isDynamic && zone === restricted.only) {
      report(`'${specifier}' must be loaded lazily with import(), never at module load`);
    }
  }
}

export const allowedImportsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the flowfleet package import graph (DESIGN.md §1)' },
    schema: [],
  },
  create(context) {
    const fromDecl = (node) =>
      check(context, node, node.source?.value, {
        isTypeOnly: node.importKind === 'type' || node.exportKind === 'type',
        isDynamic: false,
      });
    return {
      ImportDeclaration: fromDecl,
      ExportNamedDeclaration: (node) => node.source && fromDecl(node),
      ExportAllDeclaration: fromDecl,
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') {
          check(context, node, node.source.value, { isTypeOnly: false, isDynamic: true });
        }
      },
      TSImportType: (node) => {
        const value = node.argument?.literal?.value ?? node.source?.value;
        check(context, node, value, { isTypeOnly: true, isDynamic: false });
      },
    };
  },
};

export const flowfleetPlugin = { rules: { 'allowed-imports': allowedImportsRule } };
