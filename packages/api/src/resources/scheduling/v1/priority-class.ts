import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';

export const priorityClassSchema = objectSchema({
  value: s.int32({ tag: 2 }),
  globalDefault: s.bool({ tag: 3 }),
  description: s.str({ tag: 4 }),
  preemptionPolicy: s.str({ tag: 5 }),
});

export const priorityClass = (): ResourceType =>
  defineResource({
    group: group('scheduling'),
    version: 'v1',
    kind: 'PriorityClass',
    plural: 'priorityclasses',
    singular: 'priorityclass',
    shortNames: ['pc'],
    namespaced: false,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      column('Value', 'integer', (o) => (typeof o.value === 'number' ? o.value : 0)),
      column('Global-Default', 'boolean', (o) => o.globalDefault === true),
      ageColumn,
      column('PreemptionPolicy', 'string', (o) => (typeof o.preemptionPolicy === 'string' ? o.preemptionPolicy : '')),
    ],
    schema: priorityClassSchema,
  });
