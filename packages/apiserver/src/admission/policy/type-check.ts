/**
 * Kubernetes' policy type checker: each validation's expression and messageExpression
 * compiled against the schema of every kind the matchConstraints name explicitly (no
 * wildcards, at most 10, sorted), with `params` typed by the paramKind's schema (undeclared
 * when it has none) and the variables composed in the same environment. What does not
 * compile becomes an expression warning: `<group>/<version>, Kind=<kind>: ERROR: …`.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { Catalog, ExpressionWarning, ResourceType, ValidatingAdmissionPolicy } from '@svc/api';
import { CelTypes, type JSONSchemaProps } from '../../apiextensions/schema/index.js';
import { toOpenApi } from '../../endpoints/openapi.js';
import { policyBaseEnvironment, typedEnvironment } from './cel-env.js';
import { compileExpression } from './compile.js';
import { compileVariables } from './compiled-policy.js';

const MAX_TYPES = 10;

const schemas = new WeakMap<ResourceType, JSONSchemaProps>();

/** A kind's OpenAPI schema: a custom resource's as written, a built-in's from the schema DSL. */
function schemaOf(r: ResourceType): JSONSchemaProps {
  let s = schemas.get(r);
  if (!s) {
    const custom = r.custom?.openApiSchema as JSONSchemaProps | undefined;
    s = custom ?? (toOpenApi(r.schema) as JSONSchemaProps);
    schemas.set(r, s);
  }
  return s;
}

const gvkString = (r: ResourceType): string => `${r.group}/${r.version}, Kind=${r.kind}`;

/** Kubernetes' typesToCheck: the kinds of the explicitly named group/version/resources. */
function typesToCheck(p: ValidatingAdmissionPolicy, catalog: Catalog): ResourceType[] {
  const found = new Map<string, ResourceType>();
  let count = 0;
  for (const rule of p.spec?.matchConstraints?.resourceRules ?? []) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.length === 0 || groups.some((g) => g.includes('*'))) continue;
    if (versions.length === 0 || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    if (resources.length === 0) continue;
    for (const g of [...groups].sort())
      for (const v of [...versions].sort())
        for (const res of [...resources].sort()) {
          const t = catalog.lookup(g, v, res);
          if (!t) continue;
          found.set(`${t.group}/${t.version}/${t.kind}`, t);
          if (++count === MAX_TYPES) return sortKinds([...found.values()]);
        }
  }
  return sortKinds([...found.values()]);
}

function sortKinds(list: ResourceType[]): ResourceType[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return list.sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
}

/** The typed environment for one kind (and the params' kind, when known). */
function environmentFor(p: ValidatingAdmissionPolicy, o: { object: ResourceType; params?: ResourceType }): Environment {
  const objectSchema = schemaOf(o.object);
  const objectTypes = new CelTypes(objectSchema, policyBaseEnvironment(), 'Object');
  let types = objectTypes.env;
  let paramsType: string | undefined;
  if (o.params) {
    const paramsSchema = schemaOf(o.params);
    const paramTypes = new CelTypes(paramsSchema, types, 'Params');
    paramsType = paramTypes.typeOf(paramsSchema, true) ?? 'dyn';
    types = paramTypes.env;
  }
  const declared = {
    hasParams: o.params !== undefined,
    paramsType,
    objectType: objectTypes.typeOf(objectSchema, true),
  };
  const vars = compileVariables(p.spec?.variables ?? [], { types, ...declared });
  return typedEnvironment(types, { ...declared, hasAuthorizer: true, variables: vars.types });
}

function paramsKind(p: ValidatingAdmissionPolicy, catalog: Catalog): ResourceType | undefined {
  const pk = p.spec?.paramKind;
  if (!pk?.apiVersion || !pk.kind) return undefined;
  const at = pk.apiVersion.indexOf('/');
  const [g, v] = at < 0 ? ['', pk.apiVersion] : [pk.apiVersion.slice(0, at), pk.apiVersion.slice(at + 1)];
  return catalog.byKind(g, v, pk.kind);
}

/** Kubernetes' TypeChecker.Check: the expression warnings of a policy. */
export function typeCheck(p: ValidatingAdmissionPolicy, catalog: Catalog): ExpressionWarning[] {
  const params = paramsKind(p, catalog);
  const envs: Array<{ kind: ResourceType; env: Environment }> = [];
  for (const kind of typesToCheck(p, catalog)) {
    try {
      envs.push({ kind, env: environmentFor(p, { object: kind, params }) });
    } catch {
      // A schema cel-js cannot declare is skipped, as Kubernetes skips kinds it cannot resolve.
    }
  }
  const check = (expression: string): string =>
    envs
      .map(({ kind, env }) => {
        const r = compileExpression(expression, { env, returns: 'any' });
        const issues = r.error?.replace(/^compilation failed: /, '');
        return issues === undefined ? '' : `${gvkString(kind)}: ${issues}\n`;
      })
      .filter((s) => s !== '')
      .join('\n');
  const warnings: ExpressionWarning[] = [];
  (p.spec?.validations ?? []).forEach((v, i) => {
    const w = check(v.expression ?? '');
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = check(v.messageExpression);
    if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}
