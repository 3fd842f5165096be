import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ValidatingAdmissionPolicy } from '../../../wire/admission-policy.js';
import { matchConditions, matchResources } from './match-resources.js';

const condition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    observedGeneration: s.int64({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
  },
  {},
);

export const validatingAdmissionPolicySchema = objectSchema({
  spec: s.obj(
    {
      paramKind: s.obj({ apiVersion: s.str({ tag: 1 }), kind: s.str({ tag: 2 }) }, { tag: 1, structType: 'atomic' }),
      matchConstraints: { ...matchResources, tag: 2 },
      validations: s.atomic(
        s.obj({
          expression: s.str({ tag: 1 }),
          message: s.str({ tag: 2 }),
          reason: s.str({ tag: 3 }),
          messageExpression: s.str({ tag: 4 }),
        }),
        { tag: 3 },
      ),
      failurePolicy: s.str({ tag: 4 }),
      auditAnnotations: s.atomic(s.obj({ key: s.str({ tag: 1 }), valueExpression: s.str({ tag: 2 }) }), { tag: 5 }),
      matchConditions: matchConditions(6),
      variables: s.keyed(
        s.obj({ name: s.str({ tag: 1 }), expression: s.str({ tag: 2 }) }, { structType: 'atomic' }),
        ['name'],
        { tag: 7 },
      ),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      typeChecking: s.obj(
        {
          expressionWarnings: s.atomic(s.obj({ fieldRef: s.str({ tag: 2 }), warning: s.str({ tag: 3 }) }), {
            tag: 1,
          }),
        },
        { tag: 2 },
      ),
      conditions: s.keyed(condition, ['type'], { tag: 3 }),
    },
    { tag: 3 },
  ),
});

/** Kubernetes' printer: `<apiVersion>/<kind>` of the paramKind, or `<unset>`. */
function paramKindCell(o: ValidatingAdmissionPolicy): string {
  const pk = o.spec?.paramKind;
  return pk ? `${pk.apiVersion ?? ''}/${pk.kind ?? ''}` : '<unset>';
}

/** `admissionregistration.<suffix>/v1` ValidatingAdmissionPolicy: cluster scoped, with a status subresource. */
export const validatingAdmissionPolicy = (): ResourceType =>
  defineResource({
    group: group('admissionregistration'),
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    singular: 'validatingadmissionpolicy',
    categories: ['api-extensions'],
    namespaced: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('Validations', 'integer', (o) => (o as ValidatingAdmissionPolicy).spec?.validations?.length ?? 0),
      column('ParamKind', 'string', (o) => paramKindCell(o as ValidatingAdmissionPolicy)),
      ageColumn,
    ],
    schema: validatingAdmissionPolicySchema,
  });
