import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { countOf } from '../../../table-format.js';
import { objectReference, localObjectReference } from './common.js';

export const serviceAccountSchema = objectSchema({
  secrets: s.keyed(objectReference, ['name'], { tag: 2, listType: 'atomic' }),
  imagePullSecrets: s.atomic(localObjectReference, { tag: 3 }),
  automountServiceAccountToken: s.bool({ tag: 4 }),
});

export const serviceAccount = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    singular: 'serviceaccount',
    shortNames: ['sa'],
    namespaced: true,
    hasSpec: false,
    tableColumns: [nameColumn, column('Secrets', 'integer', (o) => countOf(o.secrets)), ageColumn],
    schema: serviceAccountSchema,
  });
