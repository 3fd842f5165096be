import type { ApiObject } from '../../../types.js';
import { NONE } from '../../../table-format.js';

interface ServiceSpec {
  type?: string;
  externalIPs?: string[];
  externalName?: string;
  ports?: Array<{ port?: number; nodePort?: number; protocol?: string }>;
}

export function servicePorts(o: ApiObject): string {
  const ports = ((o.spec ?? {}) as ServiceSpec).ports ?? [];
  return (
    ports.map((p) => `${p.port ?? ''}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',') || NONE
  );
}

export function serviceExternalIp(o: ApiObject): string {
  const spec = (o.spec ?? {}) as ServiceSpec;
  if (spec.type === 'ExternalName') return spec.externalName ?? NONE;
  const ingress = (
    (o.status as { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> } } | undefined)?.loadBalancer
      ?.ingress ?? []
  )
    .map((i) => i.ip ?? i.hostname ?? '')
    .filter((x) => x);
  const all = [...(spec.externalIPs ?? []), ...ingress];
  if (all.length) return all.join(',');
  return spec.type === 'LoadBalancer' ? '<pending>' : NONE;
}
