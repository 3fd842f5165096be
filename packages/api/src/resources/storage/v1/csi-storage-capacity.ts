import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { column, nameColumn } from '../../../table-columns.js';
import type { CSIStorageCapacity } from '../../../wire/storage.js';

/** storage/v1 CSIStorageCapacity with generated.proto's numbers; no spec, its fields are top level. */
export const csiStorageCapacitySchema = objectSchema({
  nodeTopology: { ...labelSelector, tag: 2 },
  storageClassName: s.str({ tag: 3 }),
  capacity: s.quantity({ tag: 4 }),
  maximumVolumeSize: s.quantity({ tag: 5 }),
});

/**
 * storage/v1 CSIStorageCapacity: namespaced, no short name; kubectl's columns Name,
 * StorageClassName, Capacity (`<unset>` when absent; no Age column, as kubectl).
 */
export const csiStorageCapacity = (): ResourceType =>
  defineResource({
    group: group('storage'),
    version: 'v1',
    kind: 'CSIStorageCapacity',
    plural: 'csistoragecapacities',
    singular: 'csistoragecapacity',
    namespaced: true,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      {
        ...column('StorageClassName', 'string', (o) => (o as CSIStorageCapacity).storageClassName ?? ''),
        description: 'The StorageClass the capacity applies to.',
      },
      {
        ...column('Capacity', 'string', (o) => {
          const q = (o as CSIStorageCapacity).capacity;
          return q === undefined ? '<unset>' : String(q);
        }),
        description: 'The capacity available for new volumes of the class in the topology segment.',
      },
    ],
    schema: csiStorageCapacitySchema,
  });
