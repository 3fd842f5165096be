import {
  conflict,
  fieldErrors,
  groupVersion,
  invalid,
  scaleKind,
  statusError,
  type ApiObject,
  type ResourceType,
  type ScalePaths,
  type SubresourceKind,
} from '@svc/api';
import { labelSelectorFromObject, type LabelSelectorObject } from '@svc/machinery';

/** autoscaling/v1 Scale; it does not depend on the naming. */
const SCALE: SubresourceKind = scaleKind();

/**
 * The `scale` subresource of a type: a Scale read from the stored object and written back
 * into it. Handlers decode and answer in `kind`; the store writes the parent object.
 */
export interface ScaleView {
  kind: SubresourceKind;
  read(stored: ApiObject): ApiObject;
  /** The stored object with the Scale's replicas written in; 422 for a negative count, 409 for another uid. */
  write(scale: ApiObject, stored: ApiObject): ApiObject;
}

function valueAt(obj: unknown, path: string): unknown {
  let v = obj;
  for (const key of path.split('.'))
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

function setAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop() ?? '';
  let o = obj;
  for (const key of keys) {
    const next = o[key];
    o = (next !== null && typeof next === 'object' ? next : (o[key] = {})) as Record<string, unknown>;
  }
  o[last] = value;
}

/**
 * A selector as Scale's `status.selector` carries it: text as it is, an object in its text form
 * (a plain label map, `isMap`, as Kubernetes' labels.SelectorFromSet).
 */
function selectorText(v: unknown, isMap = false): string {
  if (typeof v === 'string') return v;
  if (v === null || typeof v !== 'object') return '';
  const sel = isMap ? { matchLabels: v as Record<string, string> } : (v as LabelSelectorObject);
  return labelSelectorFromObject(sel).toString();
}

/** Kubernetes' scaleFromDeployment (and its kin): identity metadata, desired and current replicas, the selector. */
export function scaleOf(paths: ScalePaths, obj: ApiObject): ApiObject {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  const replicas = Number(valueAt(obj, paths.specReplicasPath) ?? 0);
  const selector = paths.labelSelectorPath
    ? selectorText(valueAt(obj, paths.labelSelectorPath), paths.labelSelectorIsMap)
    : '';
  return {
    kind: SCALE.kind,
    apiVersion: groupVersion(SCALE),
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: replicas ? { replicas } : {},
    status: { replicas: Number(valueAt(obj, paths.statusReplicasPath) ?? 0), ...(selector ? { selector } : {}) },
  };
}

/**
 * Kubernetes' scaleUpdatedObjectInfo: the stored object with `spec.replicas` from the Scale
 * (absent = 0) and the Scale's resourceVersion as the write's precondition. `type` is the
 * parent's resource type and its scale paths.
 */
export function withScale(
  type: { resource: ResourceType; paths: ScalePaths },
  stored: ApiObject,
  scale: ApiObject,
): ApiObject {
  const { resource: r, paths } = type;
  const name = stored.metadata.name ?? '';
  const replicas = (scale.spec as { replicas?: number } | undefined)?.replicas ?? 0;
  if (replicas < 0) {
    throw invalid({ group: SCALE.group, kind: SCALE.kind }, name, [
      fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'),
    ]);
  }
  if (scale.metadata.uid && scale.metadata.uid !== stored.metadata.uid) {
    throw conflict(
      { group: r.group, resource: `${r.plural}/scale` },
      name,
      `Precondition failed: UID in precondition: ${scale.metadata.uid}, UID in object meta: ${stored.metadata.uid ?? ''}`,
    );
  }
  const next = structuredClone(stored);
  setAt(next, paths.specReplicasPath, replicas);
  next.metadata.resourceVersion = scale.metadata.resourceVersion;
  return next;
}

/** The `scale` view of a type; 404 for a type without scale paths. */
export function scaleView(r: ResourceType): ScaleView {
  const paths = r.scale;
  if (!paths) throw statusError('NotFound', 'the server could not find the requested resource');
  return {
    kind: SCALE,
    read: (o) => scaleOf(paths, o),
    write: (scale, o) => withScale({ resource: r, paths }, o, scale),
  };
}
