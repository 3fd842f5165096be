import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ValidatingAdmissionPolicyBinding } from '../../../wire/admission-policy.js';
import type { LabelSelectorObject } from '../../../wire/meta.js';
import { matchResources } from './match-resources.js';

export const validatingAdmissionPolicyBindingSchema = objectSchema({
  spec: s.obj(
    {
      policyName: s.str({ tag: 1 }),
      paramRef: s.obj(
        {
          name: s.str({ tag: 1 }),
          namespace: s.str({ tag: 2 }),
          selector: { ...labelSelector, tag: 3 },
          parameterNotFoundAction: s.str({ tag: 4 }),
        },
        { tag: 2, structType: 'atomic' },
      ),
      matchResources: { ...matchResources, tag: 3 },
      validationActions: s.set(s.str(), { tag: 4 }),
    },
    { tag: 2 },
  ),
});

/** A label selector as Go prints the generated type (`&LabelSelector{MatchLabels:map[string]string{...},...}`). */
function selectorString(sel: LabelSelectorObject): string {
  const labels = Object.keys(sel.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${sel.matchLabels?.[k] ?? ''},`)
    .join('');
  const exprs = (sel.matchExpressions ?? [])
    .map(
      (e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`,
    )
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

/** Kubernetes' printer: `<namespace>/<name>`, `*\/<name>` without a namespace, the selector, or `<unset>`. */
function paramRefCell(o: ValidatingAdmissionPolicyBinding): string {
  const pr = o.spec?.paramRef;
  if (!pr) return '<unset>';
  if (pr.name) return `${pr.namespace || '*'}/${pr.name}`;
  return pr.selector ? selectorString(pr.selector) : '<unset>';
}

/** `admissionregistration.<suffix>/v1` ValidatingAdmissionPolicyBinding: cluster scoped. */
export const validatingAdmissionPolicyBinding = (): ResourceType =>
  defineResource({
    group: group('admissionregistration'),
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    singular: 'validatingadmissionpolicybinding',
    categories: ['api-extensions'],
    namespaced: false,
    tableColumns: [
      nameColumn,
      column('PolicyName', 'string', (o) => (o as ValidatingAdmissionPolicyBinding).spec?.policyName ?? ''),
      column('ParamRef', 'string', (o) => paramRefCell(o as ValidatingAdmissionPolicyBinding)),
      ageColumn,
    ],
    schema: validatingAdmissionPolicyBindingSchema,
  });
