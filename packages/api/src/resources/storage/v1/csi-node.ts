import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { CSINode } from '../../../wire/storage.js';

/** storage/v1 CSINode with generated.proto's numbers (spec 2; drivers 1, a list keyed by name). */
export const csiNodeSchema = objectSchema({
  spec: s.obj(
    {
      drivers: s.keyed(
        s.obj({
          name: s.str({ tag: 1 }),
          nodeID: s.str({ tag: 2 }),
          topologyKeys: s.atomic(s.str(), { tag: 3 }),
          allocatable: s.obj({ count: s.int32({ tag: 1 }) }, { tag: 4 }),
        }),
        ['name'],
        { tag: 1 },
      ),
    },
    { tag: 2 },
  ),
});

/** storage/v1 CSINode: cluster-scoped, named after its Node, no short name; kubectl's columns Name, Drivers, Age. */
export const csiNode = (): ResourceType =>
  defineResource({
    group: group('storage'),
    version: 'v1',
    kind: 'CSINode',
    plural: 'csinodes',
    singular: 'csinode',
    namespaced: false,
    // Kubernetes' csiNodeStrategy keeps no metadata.generation.
    hasSpec: false,
    tableColumns: [
      nameColumn,
      {
        ...column('Drivers', 'integer', (o) => (o as CSINode).spec?.drivers?.length ?? 0),
        description: 'Drivers indicates the number of CSI drivers registered on the node',
      },
      ageColumn,
    ],
    schema: csiNodeSchema,
  });
