import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { quantityMap } from '../../core/v1/common.js';

/** core/v1 Toleration (the same message as a pod's). */
const toleration = s.obj({
  key: s.str({ tag: 1 }),
  operator: s.str({ tag: 2, enum: ['Exists', 'Equal'] }),
  value: s.str({ tag: 3 }),
  effect: s.str({ tag: 4 }),
  tolerationSeconds: s.int64({ tag: 5 }),
});

export const runtimeClassSchema = objectSchema({
  handler: s.str({ tag: 2 }),
  overhead: s.obj({ podFixed: { ...quantityMap, tag: 1 } }, { tag: 3 }),
  scheduling: s.obj(
    {
      nodeSelector: s.map(s.str(), { tag: 1, mapType: 'atomic' }),
      tolerations: s.atomic(toleration, { tag: 2 }),
    },
    { tag: 4 },
  ),
});

export const runtimeClass = (): ResourceType =>
  defineResource({
    group: group('node'),
    version: 'v1',
    kind: 'RuntimeClass',
    plural: 'runtimeclasses',
    singular: 'runtimeclass',
    namespaced: false,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      column('Handler', 'string', (o) => (typeof o.handler === 'string' ? o.handler : '')),
      ageColumn,
    ],
    schema: runtimeClassSchema,
  });
