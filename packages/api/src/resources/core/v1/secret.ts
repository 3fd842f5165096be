import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { countOf } from '../../../table-format.js';

export const secretSchema = objectSchema({
  immutable: s.bool({ tag: 5 }),
  data: s.map(s.bytes(), { tag: 2 }),
  stringData: s.map(s.str(), { tag: 4 }),
  type: s.str({ tag: 3 }),
});

export const secret = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    singular: 'secret',
    namespaced: true,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      column('Type', 'string', (o) => o.type ?? ''),
      column('Data', 'integer', (o) => countOf(o.data)),
      ageColumn,
    ],
    schema: secretSchema,
    fieldSelectors: { type: (o) => String(o.type ?? '') },
  });
