// Small wire types shared by several kinds. See conformance.ts for how the wire types of
// this folder are kept true to the schemas.

/** A condition's `status` (Kubernetes' ConditionStatus). */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** `intstr.IntOrString`: `3` or `'25%'`. */
export type IntOrString = number | string;

/**
 * `resource.Quantity` as components read it (`'100m'`, `'1Gi'`). The schema also admits a
 * JSON number; components that read quantities take strings.
 */
export type Quantity = string;

/** Amounts by resource name (`cpu`, `memory`, `pods`, ...). */
export type ResourceList = Record<string, Quantity>;

/** metav1.LabelSelectorRequirement. */
export interface LabelSelectorRequirement {
  key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector (the object form, e.g. `spec.selector`). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** core/v1 ObjectReference. */
export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  /** A part of the object, e.g. `spec.containers{web}`. */
  fieldPath?: string;
}

/** core/v1 LocalObjectReference. */
export interface LocalObjectReference {
  name?: string;
}
