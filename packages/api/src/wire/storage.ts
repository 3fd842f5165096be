import type { ApiObject } from '../types.js';
import type { LabelSelectorObject, ObjectReference, ResourceList } from './meta.js';
import type { NodeSelectorTerm } from './pod.js';

/** core/v1 PersistentVolume and PersistentVolumeClaim; storage/v1 StorageClass, CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity. */

export type PersistentVolumeAccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';
export type PersistentVolumeReclaimPolicy = 'Retain' | 'Delete' | 'Recycle';
export type PersistentVolumeMode = 'Filesystem' | 'Block';

/** A Secret by name and namespace (core/v1 SecretReference). */
export interface SecretReference {
  name?: string;
  namespace?: string;
}

export interface CSIPersistentVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly?: boolean;
  fsType?: string;
  volumeAttributes?: Record<string, string>;
  controllerPublishSecretRef?: SecretReference;
  nodeStageSecretRef?: SecretReference;
  nodePublishSecretRef?: SecretReference;
  controllerExpandSecretRef?: SecretReference;
  nodeExpandSecretRef?: SecretReference;
}

/** The volume types components read; the spec holds exactly one volume type. */
export interface PersistentVolumeSpec {
  capacity?: ResourceList;
  hostPath?: { path: string; type?: string };
  local?: { path: string; fsType?: string };
  nfs?: { server: string; path: string; readOnly?: boolean };
  csi?: CSIPersistentVolumeSource;
  accessModes?: PersistentVolumeAccessMode[];
  claimRef?: ObjectReference;
  /** Defaults to Retain. */
  persistentVolumeReclaimPolicy?: PersistentVolumeReclaimPolicy;
  storageClassName?: string;
  mountOptions?: string[];
  /** Defaults to Filesystem. */
  volumeMode?: PersistentVolumeMode;
  nodeAffinity?: { required?: { nodeSelectorTerms: NodeSelectorTerm[] } };
  volumeAttributesClassName?: string;
}

export interface PersistentVolumeStatus {
  phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';
  message?: string;
  reason?: string;
  lastPhaseTransitionTime?: string;
}

export interface PersistentVolume extends ApiObject {
  spec?: PersistentVolumeSpec;
  status?: PersistentVolumeStatus;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: PersistentVolumeAccessMode[];
  selector?: LabelSelectorObject;
  resources?: { limits?: ResourceList; requests?: ResourceList };
  volumeName?: string;
  /** Unset: the default class (DefaultStorageClass admission); `''`: no class. */
  storageClassName?: string;
  /** Defaults to Filesystem. */
  volumeMode?: PersistentVolumeMode;
  dataSource?: { apiGroup?: string; kind: string; name: string };
  dataSourceRef?: { apiGroup?: string; kind: string; name: string; namespace?: string };
  volumeAttributesClassName?: string;
}

export interface PersistentVolumeClaimCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface PersistentVolumeClaimStatus {
  phase?: 'Pending' | 'Bound' | 'Lost';
  accessModes?: PersistentVolumeAccessMode[];
  capacity?: ResourceList;
  conditions?: PersistentVolumeClaimCondition[];
  allocatedResources?: ResourceList;
  allocatedResourceStatuses?: Record<string, string>;
  currentVolumeAttributesClassName?: string;
}

export interface PersistentVolumeClaim extends ApiObject {
  spec?: PersistentVolumeClaimSpec;
  status?: PersistentVolumeClaimStatus;
}

export interface TopologySelectorTerm {
  matchLabelExpressions?: Array<{ key: string; values: string[] }>;
}

/** storage/v1 StorageClass: no spec, its fields are top level. */
export interface StorageClass extends ApiObject {
  provisioner: string;
  parameters?: Record<string, string>;
  /** Defaults to Delete. */
  reclaimPolicy?: 'Delete' | 'Retain';
  mountOptions?: string[];
  allowVolumeExpansion?: boolean;
  /** Defaults to Immediate. */
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  allowedTopologies?: TopologySelectorTerm[];
}

/** storage/v1 CSIDriver's spec; every field but tokenRequests is defaulted (SetDefaults_CSIDriver). */
export interface CSIDriverSpec {
  /** Defaults to true; immutable. */
  attachRequired?: boolean;
  /** Defaults to false. */
  podInfoOnMount?: boolean;
  /** Defaults to `[Persistent]`; immutable. */
  volumeLifecycleModes?: Array<'Persistent' | 'Ephemeral'>;
  /** Defaults to false. */
  storageCapacity?: boolean;
  /** Defaults to ReadWriteOnceWithFSType. */
  fsGroupPolicy?: 'ReadWriteOnceWithFSType' | 'File' | 'None';
  tokenRequests?: Array<{ audience: string; expirationSeconds?: number }>;
  /** Defaults to false. */
  requiresRepublish?: boolean;
  /** Defaults to false. */
  seLinuxMount?: boolean;
}

/** storage/v1 CSIDriver (cluster-scoped; named after the driver). */
export interface CSIDriver extends ApiObject {
  spec?: CSIDriverSpec;
}

export interface CSINodeDriver {
  name: string;
  nodeID: string;
  topologyKeys?: string[];
  allocatable?: { count?: number };
}

/** storage/v1 CSINode (cluster-scoped; named after its Node). */
export interface CSINode extends ApiObject {
  spec?: { drivers?: CSINodeDriver[] };
}

export interface VolumeError {
  time?: string;
  message?: string;
}

export interface VolumeAttachmentSpec {
  attacher: string;
  /** Exactly one of the two. */
  source: { persistentVolumeName?: string; inlineVolumeSpec?: PersistentVolumeSpec };
  nodeName: string;
}

export interface VolumeAttachmentStatus {
  attached: boolean;
  attachmentMetadata?: Record<string, string>;
  attachError?: VolumeError;
  detachError?: VolumeError;
}

/** storage/v1 VolumeAttachment (cluster-scoped); the spec is immutable, the status written through `status`. */
export interface VolumeAttachment extends ApiObject {
  spec?: VolumeAttachmentSpec;
  status?: VolumeAttachmentStatus;
}

/** storage/v1 CSIStorageCapacity (namespaced; no spec, its fields are top level). */
export interface CSIStorageCapacity extends ApiObject {
  nodeTopology?: LabelSelectorObject;
  storageClassName: string;
  capacity?: string | number;
  maximumVolumeSize?: string | number;
}
