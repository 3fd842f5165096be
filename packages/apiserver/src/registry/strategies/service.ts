import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy } from '../strategy.js';

export interface ServicePort {
  name?: string;
  nodePort?: number;
  port?: number;
  protocol?: string;
  targetPort?: number | string;
}
export interface ServiceSpec {
  type?: string;
  ports?: ServicePort[];
  sessionAffinity?: string;
  externalName?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
}

const spec = (o: ApiObject): ServiceSpec => (o.spec ?? {}) as ServiceSpec;

function defaults(s: ServiceSpec): void {
  s.type ??= 'ClusterIP';
  s.sessionAffinity ??= 'None';
  for (const p of s.ports ?? []) {
    p.protocol ??= 'TCP';
    p.targetPort ??= p.port;
  }
}

function validate(obj: ApiObject): FieldError[] {
  const s = spec(obj);
  const errs: FieldError[] = [];
  const ports = s.ports ?? [];
  if (s.type !== 'ExternalName' && ports.length === 0 && s.clusterIP !== 'None')
    errs.push(fieldErrors.required('spec.ports', ''));
  if (s.type === 'ExternalName' && !s.externalName) errs.push(fieldErrors.required('spec.externalName', ''));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    if (typeof p.port !== 'number' || p.port < 1 || p.port > 65535)
      errs.push(fieldErrors.invalid(`spec.ports[${i}].port`, p.port ?? 0, 'must be between 1 and 65535, inclusive'));
    if (ports.length > 1 && !p.name) errs.push(fieldErrors.required(`spec.ports[${i}].name`, ''));
    if (p.name) {
      if (names.has(p.name)) errs.push(fieldErrors.duplicate(`spec.ports[${i}].name`, p.name));
      names.add(p.name);
    }
  });
  return errs;
}

/**
 * As Kubernetes' patchAllocatedValues: an update that leaves out what the server allocated
 * (a replace or apply written without `clusterIP`, `ipFamilies`, node ports) keeps it.
 */
export function keepAllocated(s: ServiceSpec, old: ServiceSpec): void {
  const type = s.type ?? 'ClusterIP';
  if (type === 'ExternalName' || (old.type ?? 'ClusterIP') === 'ExternalName') return;
  if (!s.clusterIP && !s.clusterIPs?.length) {
    if (old.clusterIP) s.clusterIP = old.clusterIP;
    if (old.clusterIPs) s.clusterIPs = [...old.clusterIPs];
  }
  s.ipFamilies ??= old.ipFamilies && [...old.ipFamilies];
  s.ipFamilyPolicy ??= old.ipFamilyPolicy;
  if (type !== 'NodePort' && type !== 'LoadBalancer') return;
  for (const p of s.ports ?? []) {
    if (p.nodePort) continue;
    const was = (old.ports ?? []).find((o) => (o.name ?? '') === (p.name ?? '') || o.port === p.port);
    if (was?.nodePort) p.nodePort = was.nodePort;
  }
}

/** `spec.clusterIP(s)` may not change once set (Kubernetes' validateUpgradeDowngradeClusterIPs, single stack). */
function validateUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  const errs = validate(obj);
  const s = spec(obj);
  const o = spec(old);
  if ((s.type ?? 'ClusterIP') === 'ExternalName' || (o.type ?? 'ClusterIP') === 'ExternalName') return errs;
  const was = o.clusterIPs?.[0] ?? o.clusterIP;
  const now = s.clusterIPs?.[0] ?? s.clusterIP;
  if (was && now !== was)
    errs.push(fieldErrors.invalid('spec.clusterIPs[0]', s.clusterIPs ?? [now ?? ''], 'may not change once set'));
  return errs;
}

export const serviceStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.spec = spec(obj);
    defaults(spec(obj));
    obj.status = { loadBalancer: {} };
  },
  prepareForUpdate(obj, old) {
    defaults(spec(obj));
    keepAllocated(spec(obj), spec(old));
  },
  validate,
  validateUpdate,
  allowCreateOnUpdate: true,
};
