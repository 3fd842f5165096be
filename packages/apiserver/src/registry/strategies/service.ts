import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy } from '../strategy.js';

interface ServicePort {
  name?: string;
  port?: number;
  protocol?: string;
  targetPort?: number | string;
}
interface ServiceSpec {
  type?: string;
  ports?: ServicePort[];
  sessionAffinity?: string;
  externalName?: string;
  clusterIP?: string;
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

export const serviceStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.spec = spec(obj);
    defaults(spec(obj));
    obj.status = { loadBalancer: {} };
  },
  prepareForUpdate(obj) {
    defaults(spec(obj));
  },
  validate,
  allowCreateOnUpdate: true,
};
