import type { ConfigMap, Container, ResourceFieldSelector, Secret } from '@svc/api';
import { parseQuantity } from '../quantity.js';

/** Reads a ConfigMap or Secret of the pod's namespace; undefined when it does not exist. */
export type ObjectReader = (
  resource: 'configmaps' | 'secrets',
  namespace: string,
  name: string,
) => Promise<ConfigMap | Secret | undefined>;

/** A container's environment cannot be made: the container waits with `CreateContainerConfigError`. */
export class ContainerConfigError extends Error {}

/** Kubernetes' `$(VAR)` expansion of env values, command and args: `$$` is `$`, unknown references stay. */
export function expandVars(s: string, env: ReadonlyMap<string, string>): string {
  return s.replace(/\$\$|\$\(([^)]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : (env.get(name ?? '') ?? m),
  );
}

type Source = { resource: 'configmaps' | 'secrets'; name: string };

/**
 * Kubernetes' value of a `resourceFieldRef` for container `c`: its limit (the node's
 * allocatable when it has none) or its request (0 when it has none) of `limits.*` /
 * `requests.*` cpu, memory or ephemeral-storage, divided by `divisor` (unset or 0: 1) and
 * rounded up; CPU in whole millicores first.
 */
export function resourceFieldValue(
  c: Container,
  ref: ResourceFieldSelector,
  allocatable: Readonly<Record<string, string>>,
): string {
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(ref.resource);
  if (!m) throw new ContainerConfigError(`unsupported container resource: ${ref.resource}`);
  const [, kind, name] = m as unknown as [string, 'limits' | 'requests', string];
  const set = c.resources?.[kind]?.[name];
  const value = parseQuantity(set ?? (kind === 'limits' ? (allocatable[name] ?? '0') : '0'));
  // Kubernetes' clients send an unset divisor as "0", which means 1.
  const divisor = parseQuantity(ref.divisor ?? '1') || 1;
  if (divisor < 0) throw new ContainerConfigError(`invalid divisor for ${ref.resource}: ${ref.divisor ?? ''}`);
  if (name === 'cpu') return String(Math.ceil(Math.round(value * 1000) / Math.round(divisor * 1000)));
  return String(Math.ceil(value / divisor));
}

/** The string values of a ConfigMap's `data` or a Secret's (base64) `data`. */
function valuesOf(resource: Source['resource'], obj: ConfigMap | Secret): Record<string, string> {
  const data = obj.data ?? {};
  if (resource === 'configmaps') return data;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/**
 * A container's environment as Kubernetes' node agent makes it: first every `envFrom` source
 * (keys with the prefix; keys that cannot be variable names are left out), then `env` in
 * order, each value expanded against the variables before it. `fieldRef` values come from
 * `fieldRef`; `configMapKeyRef`/`secretKeyRef` read the object. A missing object or key is
 * skipped when optional, else a `ContainerConfigError` with Kubernetes' message.
 * `resourceFieldRef` values come from `resourceRef` (see `resourceFieldValue`).
 */
export async function containerEnvironment(
  c: Container,
  from: {
    namespace: string;
    /** Downward-API `fieldRef` values. */
    fieldRef: (path: string) => string;
    /** `resourceFieldRef` values (of `containerName`, else of `c`). */
    resourceRef: (ref: ResourceFieldSelector) => string;
    read?: ObjectReader;
  },
): Promise<Map<string, string>> {
  const { namespace, fieldRef, read } = from;
  const cache = new Map<string, Promise<ConfigMap | Secret | undefined>>();
  /** The object's values; undefined when it is missing and `optional`, else missing is an error. */
  const fetch = async (src: Source, optional: boolean | undefined): Promise<Record<string, string> | undefined> => {
    if (!read)
      throw new ContainerConfigError(`cannot read ${src.resource} "${src.name}": no API server (standalone mode)`);
    const key = `${src.resource}/${src.name}`;
    if (!cache.has(key)) cache.set(key, read(src.resource, namespace, src.name));
    let obj: ConfigMap | Secret | undefined;
    try {
      obj = await cache.get(key);
    } catch (e) {
      // Any other failure (forbidden, API unreachable) also keeps the container waiting; the next sync tries again.
      throw new ContainerConfigError(e instanceof Error ? e.message : String(e));
    }
    if (obj) return valuesOf(src.resource, obj);
    if (optional) return undefined;
    throw new ContainerConfigError(`${src.resource} "${src.name}" not found`);
  };
  const kindName = (r: Source['resource']): string => (r === 'configmaps' ? 'ConfigMap' : 'Secret');
  const env = new Map<string, string>();
  for (const source of c.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    if (!ref) continue;
    const values = await fetch(
      { resource: source.configMapRef ? 'configmaps' : 'secrets', name: ref.name ?? '' },
      ref.optional,
    );
    if (!values) continue;
    for (const [k, v] of Object.entries(values)) {
      const name = `${source.prefix ?? ''}${k}`;
      if (name && !name.includes('=')) env.set(name, v);
    }
  }
  for (const e of c.env ?? []) {
    const vf = e.valueFrom;
    const keyRef = vf?.configMapKeyRef ?? vf?.secretKeyRef;
    if (vf?.fieldRef) {
      env.set(e.name, fieldRef(vf.fieldRef.fieldPath));
    } else if (vf?.resourceFieldRef) {
      env.set(e.name, from.resourceRef(vf.resourceFieldRef));
    } else if (keyRef) {
      const resource = vf?.configMapKeyRef ? 'configmaps' : 'secrets';
      const values = await fetch({ resource, name: keyRef.name ?? '' }, keyRef.optional);
      if (!values) continue;
      const value = values[keyRef.key];
      if (value === undefined) {
        if (keyRef.optional) continue;
        throw new ContainerConfigError(
          `couldn't find key ${keyRef.key} in ${kindName(resource)} ${namespace}/${keyRef.name ?? ''}`,
        );
      }
      env.set(e.name, value);
    } else if (!vf) {
      env.set(e.name, expandVars(e.value ?? '', env));
    }
  }
  return env;
}
