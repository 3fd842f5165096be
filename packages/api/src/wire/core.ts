import type { ApiObject } from '../types.js';
import type { ConditionStatus, LocalObjectReference, ObjectReference } from './meta.js';

/** core/v1 Namespace, ServiceAccount, Secret and ConfigMap. */

export interface NamespaceCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Namespace extends ApiObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: NamespaceCondition[] };
}

export interface ServiceAccount extends ApiObject {
  secrets?: ObjectReference[];
  imagePullSecrets?: LocalObjectReference[];
  automountServiceAccountToken?: boolean;
}

/** `data` values are base64; `stringData` is write-only plain text. */
export interface Secret extends ApiObject {
  immutable?: boolean;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
}

export interface ConfigMap extends ApiObject {
  immutable?: boolean;
  data?: Record<string, string>;
  /** Values are base64. */
  binaryData?: Record<string, string>;
}
