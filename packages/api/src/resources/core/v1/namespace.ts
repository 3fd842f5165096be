import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';

export const namespaceSchema = objectSchema({
  spec: s.obj({ finalizers: s.atomic(s.str(), { tag: 1 }) }, { tag: 2 }),
  status: s.obj(
    {
      phase: s.str({ tag: 1, enum: ['Active', 'Terminating'] }),
      conditions: s.keyed(
        s.obj(
          {
            type: s.str({ tag: 1 }),
            status: s.str({ tag: 2 }),
            lastTransitionTime: s.time({ tag: 4 }),
            reason: s.str({ tag: 5 }),
            message: s.str({ tag: 6 }),
          },
          { required: ['type', 'status'] },
        ),
        ['type'],
        { tag: 2 },
      ),
    },
    { tag: 3 },
  ),
});

export const namespace = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    singular: 'namespace',
    shortNames: ['ns'],
    namespaced: false,
    nameRule: 'dns-label',
    hasSpec: false,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status', 'finalize'],
    tableColumns: [
      nameColumn,
      column('Status', 'string', (o) => (o.status as { phase?: string } | undefined)?.phase ?? ''),
      ageColumn,
    ],
    schema: namespaceSchema,
  });
