import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { group } from '../../../names.js';

export const leaseSchema = objectSchema({
  spec: s.obj(
    {
      holderIdentity: s.str({ tag: 1 }),
      leaseDurationSeconds: s.int32({ tag: 2 }),
      acquireTime: s.microTime({ tag: 3 }),
      renewTime: s.microTime({ tag: 4 }),
      leaseTransitions: s.int32({ tag: 5 }),
      strategy: s.str({ tag: 6 }),
      preferredHolder: s.str({ tag: 7 }),
    },
    { tag: 2 },
  ),
});

export const lease = (): ResourceType =>
  defineResource({
    group: group('coordination'),
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    singular: 'lease',
    namespaced: true,
    tableColumns: [
      nameColumn,
      column('Holder', 'string', (o) => (o.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? ''),
      ageColumn,
    ],
    schema: leaseSchema,
  });
