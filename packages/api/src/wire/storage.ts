import type { ApiObject } from '../types.js';
import type { LabelSelectorObject, ObjectReference, ResourceList } from './meta.js';
import type { NodeSelectorTerm } from './pod.js';

/** core/v1 PersistentVolume and PersistentVolumeClaim, storage/v1 StorageClass. */

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
