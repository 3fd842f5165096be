import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { classAnnotationKey, group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';

/** core/v1 TopologySelectorTerm. */
export const topologySelectorTerm = s.obj({
  matchLabelExpressions: s.atomic(s.obj({ key: s.str({ tag: 1 }), values: s.atomic(s.str(), { tag: 2 }) }), { tag: 1 }),
});

export const storageClassSchema = objectSchema({
  provisioner: s.str({ tag: 2 }),
  parameters: s.map(s.str(), { tag: 3 }),
  reclaimPolicy: s.str({ tag: 4 }),
  mountOptions: s.atomic(s.str(), { tag: 5 }),
  allowVolumeExpansion: s.bool({ tag: 6 }),
  volumeBindingMode: s.str({ tag: 7 }),
  allowedTopologies: s.atomic(topologySelectorTerm, { tag: 8 }),
});

/** Either default-class annotation set to `true` (Kubernetes' IsDefaultAnnotation). */
export function isDefaultStorageClass(o: Pick<ApiObject, 'metadata'>): boolean {
  const a = o.metadata.annotations ?? {};
  return (
    a[classAnnotationKey('storage-class-is-default')] === 'true' ||
    a[classAnnotationKey('beta-storage-class-is-default')] === 'true'
  );
}

interface StorageClassView {
  provisioner?: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  allowVolumeExpansion?: boolean;
}

export const storageClass = (): ResourceType =>
  defineResource({
    group: group('storage'),
    version: 'v1',
    kind: 'StorageClass',
    plural: 'storageclasses',
    singular: 'storageclass',
    shortNames: ['sc'],
    namespaced: false,
    hasSpec: false,
    tableColumns: [
      { ...nameColumn, cell: (o) => `${o.metadata.name ?? ''}${isDefaultStorageClass(o) ? ' (default)' : ''}` },
      column('Provisioner', 'string', (o) => (o as StorageClassView).provisioner ?? ''),
      column('ReclaimPolicy', 'string', (o) => (o as StorageClassView).reclaimPolicy ?? 'Delete'),
      column('VolumeBindingMode', 'string', (o) => (o as StorageClassView).volumeBindingMode ?? 'Immediate'),
      column('AllowVolumeExpansion', 'string', (o) => (o as StorageClassView).allowVolumeExpansion ?? false),
      ageColumn,
    ],
    schema: storageClassSchema,
  });
