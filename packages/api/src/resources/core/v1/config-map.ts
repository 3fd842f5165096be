import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { countOf } from '../../../table-format.js';

export const configMapSchema = objectSchema({
  immutable: s.bool({ tag: 4 }),
  data: s.map(s.str(), { tag: 2 }),
  binaryData: s.map(s.bytes(), { tag: 3 }),
});

export const configMap = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    singular: 'configmap',
    shortNames: ['cm'],
    namespaced: true,
    hasSpec: false,
    tableColumns: [nameColumn, column('Data', 'integer', (o) => countOf(o.data) + countOf(o.binaryData)), ageColumn],
    schema: configMapSchema,
  });
