import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import { quantityMap } from './common.js';
import { persistentVolumeClaimTemplate } from './pod.js';
import { accessModesString, phaseCell, storageClassOf } from './persistent-volume-printer.js';

/** PersistentVolumeClaimSpec: the same message as an ephemeral volume's claim template holds. */
const persistentVolumeClaimSpec = persistentVolumeClaimTemplate.properties.spec;

const claimCondition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    lastProbeTime: s.time({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
  },
  { required: ['type', 'status'] },
);

export const persistentVolumeClaimSchema = objectSchema({
  spec: { ...persistentVolumeClaimSpec, tag: 2 },
  status: s.obj(
    {
      phase: s.str({ tag: 1 }),
      accessModes: s.atomic(s.str(), { tag: 2 }),
      capacity: { ...quantityMap, tag: 3 },
      conditions: s.keyed(claimCondition, ['type'], { tag: 4 }),
      allocatedResources: { ...quantityMap, tag: 5 },
      allocatedResourceStatuses: s.map(s.str(), { tag: 7, mapType: 'granular' }),
      currentVolumeAttributesClassName: s.str({ tag: 8 }),
      modifyVolumeStatus: s.obj(
        { targetVolumeAttributesClassName: s.str({ tag: 1 }), status: s.str({ tag: 2 }) },
        { required: ['status'], tag: 9 },
      ),
    },
    { tag: 3 },
  ),
});

interface PvcView {
  spec?: {
    volumeName?: string;
    storageClassName?: string | null;
    volumeAttributesClassName?: string;
    volumeMode?: string;
  };
  status?: { accessModes?: string[]; capacity?: Record<string, unknown> };
}
const view = (o: object): PvcView => o as PvcView;

export const persistentVolumeClaim = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    shortNames: ['pvc'],
    namespaced: true,
    // Kubernetes keeps no metadata.generation on volumes and claims.
    hasSpec: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('Status', 'string', phaseCell),
      column('Volume', 'string', (o) => view(o).spec?.volumeName ?? ''),
      // Capacity and access modes are the bound volume's: empty until the claim names one.
      column('Capacity', 'string', (o) => {
        const v = view(o);
        const q = v.status?.capacity?.storage;
        if (!v.spec?.volumeName) return '';
        return typeof q === 'string' || typeof q === 'number' ? String(q) : '0';
      }),
      column('Access Modes', 'string', (o) =>
        view(o).spec?.volumeName ? accessModesString(view(o).status?.accessModes) : '',
      ),
      column('StorageClass', 'string', (o) => storageClassOf({ metadata: o.metadata, spec: view(o).spec })),
      column('VolumeAttributesClass', 'string', (o) => view(o).spec?.volumeAttributesClassName ?? '<unset>'),
      ageColumn,
      wideColumn('VolumeMode', 'string', (o) => view(o).spec?.volumeMode ?? '<unset>'),
    ],
    schema: persistentVolumeClaimSchema,
  });
