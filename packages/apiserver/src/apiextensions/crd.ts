import { group, type ApiObject } from '@svc/api';

/** Typed access to a CustomResourceDefinition (`apiextensions.<suffix>/v1`). */
export interface CrdNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface CrdPrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CrdScale {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: Record<string, unknown> };
  subresources?: { status?: Record<string, unknown>; scale?: CrdScale };
  additionalPrinterColumns?: CrdPrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdWebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface CrdConversion {
  strategy: string;
  webhook?: { clientConfig?: CrdWebhookClientConfig; conversionReviewVersions?: string[] };
}

export interface CrdCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: string;
  versions: CrdVersion[];
  conversion?: CrdConversion;
  preserveUnknownFields?: boolean;
}

export interface CrdStatus {
  conditions?: CrdCondition[];
  acceptedNames?: CrdNames;
  storedVersions?: string[];
}

export interface Crd extends ApiObject {
  spec: CrdSpec;
  status?: CrdStatus;
}

/** The finalizer that deletes a CRD's custom resources before the CRD goes. */
export function cleanupFinalizer(): string {
  return `customresourcecleanup.${group('apiextensions')}`;
}

export function conditionOf(crd: Crd, type: string): CrdCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isConditionTrue(crd: Crd, type: string): boolean {
  return conditionOf(crd, type)?.status === 'True';
}

/** The version objects are stored in (exactly one has `storage: true` in a valid CRD). */
export function storageVersionOf(crd: Crd): string {
  const versions = Array.isArray(crd.spec?.versions) ? crd.spec.versions.filter((v) => v && typeof v === 'object') : [];
  return (versions.find((v) => v.storage) ?? versions[0])?.name ?? '';
}

/**
 * Sets a condition as Kubernetes' SetCRDCondition: the transition time moves only when the
 * status changes. Returns whether anything changed.
 */
export function setCondition(crd: Crd, c: Omit<CrdCondition, 'lastTransitionTime'>, now: string): boolean {
  crd.status ??= {};
  const list = (crd.status.conditions ??= []);
  const i = list.findIndex((x) => x.type === c.type);
  const old = list[i];
  if (old && old.status === c.status && old.reason === c.reason && old.message === c.message) return false;
  const next = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return true;
}
