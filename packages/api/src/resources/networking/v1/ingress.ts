import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { NONE } from '../../../table-format.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';

/** core/v1 TypedLocalObjectReference (a resource backend). */
const typedLocalObjectReference = s.obj(
  { apiGroup: s.str({ tag: 1 }), kind: s.str({ tag: 2 }), name: s.str({ tag: 3 }) },
  { structType: 'atomic' },
);

const ingressBackend = s.obj({
  service: s.obj(
    {
      name: s.str({ tag: 1 }),
      port: s.obj({ name: s.str({ tag: 1 }), number: s.int32({ tag: 2 }) }, { structType: 'atomic', tag: 2 }),
    },
    { tag: 4 },
  ),
  resource: { ...typedLocalObjectReference, tag: 3 },
});

/**
 * HTTPIngressPath. `pathType` and `backend` are required in v1; validation reports them with
 * Kubernetes' messages (as the backend's name, a resource's kind and name), so the schema does not.
 */
const httpIngressPath = s.obj({
  path: s.str({ tag: 1 }),
  pathType: s.str({ tag: 3 }),
  backend: { ...ingressBackend, tag: 2 },
});

/** IngressRule: JSON inlines its IngressRuleValue, which Protobuf nests at field 2. */
const ingressRule = s.obj({
  host: s.str({ tag: 1 }),
  http: s.obj({ paths: s.atomic(httpIngressPath, { tag: 1 }) }, { tag: 1, embeddedIn: 2 }),
});

const ingressPortStatus = s.obj(
  { port: s.int32({ tag: 1 }), protocol: s.str({ tag: 2 }), error: s.str({ tag: 3 }) },
  { required: ['port', 'protocol'] },
);

export const ingressSchema = objectSchema({
  spec: s.obj(
    {
      ingressClassName: s.str({ tag: 4 }),
      defaultBackend: { ...ingressBackend, tag: 1 },
      tls: s.atomic(s.obj({ hosts: s.atomic(s.str(), { tag: 1 }), secretName: s.str({ tag: 2 }) }), { tag: 2 }),
      rules: s.atomic(ingressRule, { tag: 3 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      loadBalancer: s.obj(
        {
          ingress: s.atomic(
            s.obj({
              ip: s.str({ tag: 1 }),
              hostname: s.str({ tag: 2 }),
              ports: s.atomic(ingressPortStatus, { tag: 4 }),
            }),
            { tag: 1 },
          ),
        },
        { tag: 1 },
      ),
    },
    { tag: 3 },
  ),
});

interface IngressView {
  spec?: { ingressClassName?: string; rules?: Array<{ host?: string }>; tls?: unknown[] };
  status?: { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> } };
}

/** Up to three hosts, then `+ n more...`; `*` when no rule names one (Kubernetes' formatHosts). */
export function ingressHosts(o: IngressView): string {
  const rules = o.spec?.rules ?? [];
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const r of rules) {
    if (hosts.length === max) more = true;
    if (!more && r.host) hosts.push(r.host);
  }
  if (hosts.length === 0) return '*';
  const shown = hosts.join(',');
  return more ? `${shown} + ${rules.length - max} more...` : shown;
}

/** The load balancer's IPs (else hostnames), sorted and distinct; never clipped (the server prints wide). */
export function ingressAddress(o: IngressView): string {
  const set = new Set<string>();
  for (const i of o.status?.loadBalancer?.ingress ?? []) {
    if (i.ip) set.add(i.ip);
    else if (i.hostname) set.add(i.hostname);
  }
  return [...set].sort().join(',');
}

export const ingress = (): ResourceType =>
  defineResource({
    group: group('networking'),
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    singular: 'ingress',
    shortNames: ['ing'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('Class', 'string', (o) => (o as IngressView).spec?.ingressClassName ?? NONE),
      column('Hosts', 'string', (o) => ingressHosts(o as IngressView)),
      column('Address', 'string', (o) => ingressAddress(o as IngressView)),
      column('Ports', 'string', (o) => ((o as IngressView).spec?.tls?.length ? '80, 443' : '80')),
      ageColumn,
    ],
    schema: ingressSchema,
  });
