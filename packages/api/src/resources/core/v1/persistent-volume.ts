import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s, type Schema } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { objectReference, quantityMap } from './common.js';
import { nodeSelectorTerm, volumeSources } from './pod.js';
import { accessModesString, phaseCell, quantityCell, storageClassOf } from './persistent-volume-printer.js';

/** SecretReference: a Secret by name and namespace (`+structType=atomic`). */
const secretReference = s.obj({ name: s.str({ tag: 1 }), namespace: s.str({ tag: 2 }) }, { structType: 'atomic' });
const secretRef = (tag: number) => ({ ...secretReference, tag });
const strs = (tag: number) => s.atomic(s.str(), { tag });

/** A member of PersistentVolumeSource shaped as the pod's VolumeSource member of that name. */
function likeVolumeSource(name: string, tag: number): Schema {
  const v = volumeSources[name];
  if (!v) throw new Error(`no volume source ${name}`);
  return { ...v, tag };
}

export const hostPathVolumeSource = s.obj(
  { path: s.str({ tag: 1 }), type: s.str({ tag: 2 }) },
  { required: ['path'], tag: 3 },
);
export const nfsVolumeSource = s.obj(
  { server: s.str({ tag: 1 }), path: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }) },
  { required: ['server', 'path'], tag: 5 },
);
export const localVolumeSource = s.obj(
  { path: s.str({ tag: 1 }), fsType: s.str({ tag: 2 }) },
  { required: ['path'], tag: 20 },
);
export const csiPersistentVolumeSource = s.obj(
  {
    driver: s.str({ tag: 1 }),
    volumeHandle: s.str({ tag: 2 }),
    readOnly: s.bool({ tag: 3 }),
    fsType: s.str({ tag: 4 }),
    volumeAttributes: s.map(s.str(), { tag: 5 }),
    controllerPublishSecretRef: secretRef(6),
    nodeStageSecretRef: secretRef(7),
    nodePublishSecretRef: secretRef(8),
    controllerExpandSecretRef: secretRef(9),
    nodeExpandSecretRef: secretRef(10),
  },
  { required: ['driver', 'volumeHandle'], tag: 22 },
);

/**
 * PersistentVolumeSource's members with Kubernetes' numbers: JSON inlines them in the spec,
 * Protobuf nests them in the message at field 2 of PersistentVolumeSpec.
 */
const persistentVolumeSources = {
  gcePersistentDisk: likeVolumeSource('gcePersistentDisk', 1),
  awsElasticBlockStore: likeVolumeSource('awsElasticBlockStore', 2),
  hostPath: hostPathVolumeSource,
  glusterfs: s.obj(
    {
      endpoints: s.str({ tag: 1 }),
      path: s.str({ tag: 2 }),
      readOnly: s.bool({ tag: 3 }),
      endpointsNamespace: s.str({ tag: 4 }),
    },
    { required: ['endpoints', 'path'], tag: 4 },
  ),
  nfs: nfsVolumeSource,
  rbd: s.obj(
    {
      monitors: strs(1),
      image: s.str({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      pool: s.str({ tag: 4 }),
      user: s.str({ tag: 5 }),
      keyring: s.str({ tag: 6 }),
      secretRef: secretRef(7),
      readOnly: s.bool({ tag: 8 }),
    },
    { required: ['monitors', 'image'], tag: 6 },
  ),
  iscsi: s.obj(
    {
      targetPortal: s.str({ tag: 1 }),
      iqn: s.str({ tag: 2 }),
      lun: s.int32({ tag: 3 }),
      iscsiInterface: s.str({ tag: 4 }),
      fsType: s.str({ tag: 5 }),
      readOnly: s.bool({ tag: 6 }),
      portals: strs(7),
      chapAuthDiscovery: s.bool({ tag: 8 }),
      chapAuthSession: s.bool({ tag: 11 }),
      secretRef: secretRef(10),
      initiatorName: s.str({ tag: 12 }),
    },
    { required: ['targetPortal', 'iqn', 'lun'], tag: 7 },
  ),
  cinder: s.obj(
    { volumeID: s.str({ tag: 1 }), fsType: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }), secretRef: secretRef(4) },
    { required: ['volumeID'], tag: 8 },
  ),
  cephfs: s.obj(
    {
      monitors: strs(1),
      path: s.str({ tag: 2 }),
      user: s.str({ tag: 3 }),
      secretFile: s.str({ tag: 4 }),
      secretRef: secretRef(5),
      readOnly: s.bool({ tag: 6 }),
    },
    { required: ['monitors'], tag: 9 },
  ),
  fc: likeVolumeSource('fc', 10),
  flocker: likeVolumeSource('flocker', 11),
  flexVolume: s.obj(
    {
      driver: s.str({ tag: 1 }),
      fsType: s.str({ tag: 2 }),
      secretRef: secretRef(3),
      readOnly: s.bool({ tag: 4 }),
      options: s.map(s.str(), { tag: 5 }),
    },
    { required: ['driver'], tag: 12 },
  ),
  azureFile: s.obj(
    {
      secretName: s.str({ tag: 1 }),
      shareName: s.str({ tag: 2 }),
      readOnly: s.bool({ tag: 3 }),
      secretNamespace: s.str({ tag: 4 }),
    },
    { required: ['secretName', 'shareName'], tag: 13 },
  ),
  vsphereVolume: likeVolumeSource('vsphereVolume', 14),
  quobyte: likeVolumeSource('quobyte', 15),
  azureDisk: likeVolumeSource('azureDisk', 16),
  photonPersistentDisk: likeVolumeSource('photonPersistentDisk', 17),
  portworxVolume: likeVolumeSource('portworxVolume', 18),
  scaleIO: s.obj(
    {
      gateway: s.str({ tag: 1 }),
      system: s.str({ tag: 2 }),
      secretRef: secretRef(3),
      sslEnabled: s.bool({ tag: 4 }),
      protectionDomain: s.str({ tag: 5 }),
      storagePool: s.str({ tag: 6 }),
      storageMode: s.str({ tag: 7 }),
      volumeName: s.str({ tag: 8 }),
      fsType: s.str({ tag: 9 }),
      readOnly: s.bool({ tag: 10 }),
    },
    { required: ['gateway', 'system', 'secretRef'], tag: 19 },
  ),
  local: localVolumeSource,
  storageos: s.obj(
    {
      volumeName: s.str({ tag: 1 }),
      volumeNamespace: s.str({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      readOnly: s.bool({ tag: 4 }),
      secretRef: { ...objectReference, tag: 5 },
    },
    { tag: 21 },
  ),
  csi: csiPersistentVolumeSource,
};

/** The names of the volume types a PersistentVolume may use (exactly one of them). */
export const PERSISTENT_VOLUME_SOURCES: readonly string[] = Object.keys(persistentVolumeSources);

const inlined = <P extends Record<string, Schema>>(p: P): P =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, { ...v, embeddedIn: 2 }])) as P;

export const persistentVolumeSchema = objectSchema({
  spec: s.obj(
    {
      capacity: { ...quantityMap, tag: 1 },
      ...inlined(persistentVolumeSources),
      accessModes: strs(3),
      claimRef: { ...objectReference, structType: 'granular', tag: 4 },
      persistentVolumeReclaimPolicy: s.str({ tag: 5 }),
      storageClassName: s.str({ tag: 6 }),
      mountOptions: strs(7),
      volumeMode: s.str({ tag: 8 }),
      nodeAffinity: s.obj(
        {
          required: s.obj(
            { nodeSelectorTerms: s.atomic(nodeSelectorTerm, { tag: 1 }) },
            { required: ['nodeSelectorTerms'], structType: 'atomic', tag: 1 },
          ),
        },
        { tag: 9 },
      ),
      volumeAttributesClassName: s.str({ tag: 10 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      phase: s.str({ tag: 1 }),
      message: s.str({ tag: 2 }),
      reason: s.str({ tag: 3 }),
      lastPhaseTransitionTime: s.time({ tag: 4 }),
    },
    { tag: 3 },
  ),
});

interface PvSpec {
  capacity?: Record<string, unknown>;
  accessModes?: string[];
  persistentVolumeReclaimPolicy?: string;
  claimRef?: { namespace?: string; name?: string };
  volumeMode?: string;
  volumeAttributesClassName?: string;
  storageClassName?: string;
}
const pvSpec = (o: ApiObject): PvSpec => (o.spec ?? {}) as PvSpec;

export const persistentVolume = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    singular: 'persistentvolume',
    shortNames: ['pv'],
    namespaced: false,
    // Kubernetes keeps no metadata.generation on volumes and claims.
    hasSpec: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('Capacity', 'string', (o) => quantityCell(pvSpec(o).capacity?.storage)),
      column('Access Modes', 'string', (o) => accessModesString(pvSpec(o).accessModes)),
      column('Reclaim Policy', 'string', (o) => pvSpec(o).persistentVolumeReclaimPolicy ?? ''),
      column('Status', 'string', phaseCell),
      column('Claim', 'string', (o) => {
        const ref = pvSpec(o).claimRef;
        return ref ? `${ref.namespace ?? ''}/${ref.name ?? ''}` : '';
      }),
      column('StorageClass', 'string', (o) => storageClassOf({ metadata: o.metadata, spec: pvSpec(o) })),
      column('VolumeAttributesClass', 'string', (o) => pvSpec(o).volumeAttributesClassName ?? '<unset>'),
      column('Reason', 'string', (o) => (o.status as { reason?: string } | undefined)?.reason ?? ''),
      ageColumn,
      wideColumn('VolumeMode', 'string', (o) => pvSpec(o).volumeMode ?? '<unset>'),
    ],
    schema: persistentVolumeSchema,
  });
