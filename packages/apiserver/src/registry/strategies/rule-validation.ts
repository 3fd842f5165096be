/**
 * The rules admission webhooks and policies match requests with (Kubernetes'
 * validateRuleWithOperations and validateResources in admissionregistration's validation): the
 * same checks, paths and messages for both.
 */
import { fieldErrors, type FieldError, type RuleWithOperations } from '@svc/api';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];

/** Kubernetes' validateRuleWithOperations (subresources allowed): webhooks' rules and policies' match rules. */
export function validateRuleWithOperations(r: RuleWithOperations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const operations = r.operations ?? [];
  if (operations.length === 0) errs.push(fieldErrors.required(`${path}.operations`, ''));
  if (operations.length > 1 && operations.includes('*'))
    errs.push(
      fieldErrors.invalid(`${path}.operations`, operations, "if '*' is present, must not specify other operations"),
    );
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(fieldErrors.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = r.apiGroups ?? [];
  if (groups.length === 0) errs.push(fieldErrors.required(`${path}.apiGroups`, ''));
  if (groups.length > 1 && groups.includes('*'))
    errs.push(fieldErrors.invalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions = r.apiVersions ?? [];
  if (versions.length === 0) errs.push(fieldErrors.required(`${path}.apiVersions`, ''));
  if (versions.length > 1 && versions.includes('*'))
    errs.push(
      fieldErrors.invalid(`${path}.apiVersions`, versions, "if '*' is present, must not specify other API versions"),
    );
  versions.forEach((v, i) => {
    if (v === '') errs.push(fieldErrors.required(`${path}.apiVersions[${i}]`, ''));
  });
  errs.push(...validateResources(r.resources ?? [], `${path}.resources`));
  if (r.scope !== undefined && r.scope !== null && !SCOPES.includes(r.scope))
    errs.push(fieldErrors.notSupported(`${path}.scope`, r.scope, SCOPES));
  return errs;
}

/** Kubernetes' validateResources: `x`, `x/y`, `*`, `x/*`, `*\/y`, `*\/*`, without overlaps. */
function validateResources(resources: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(fieldErrors.required(path, ''));
  const withWildcardSub = new Set<string>();
  const subWithWildcardResource = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErrors.required(`${path}[${i}]`, ''));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res))
      errs.push(fieldErrors.invalid(`${path}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardResource.has(sub))
      errs.push(fieldErrors.invalid(`${path}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardResource.add(sub);
  });
  if (resources.length > 1 && doubleWildcard)
    errs.push(fieldErrors.invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    errs.push(
      fieldErrors.invalid(path, resources, "if '*' is present, must not specify other resources without subresources"),
    );
  return errs;
}
