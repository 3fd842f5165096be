import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import { servicePorts, serviceExternalIp } from './service-printer.js';

const servicePort = s.obj(
  {
    name: s.str({ tag: 1 }),
    protocol: s.str({ tag: 2, enum: ['TCP', 'UDP', 'SCTP'] }),
    appProtocol: s.str({ tag: 6 }),
    port: s.int32({ tag: 3 }),
    targetPort: s.intOrString({ tag: 4 }),
    nodePort: s.int32({ tag: 5 }),
  },
  { required: ['port'] },
);

const sessionAffinityConfig = s.obj({ clientIP: s.obj({ timeoutSeconds: s.int32({ tag: 1 }) }, { tag: 1 }) });

const portStatus = s.obj(
  {
    port: s.int32({ tag: 1 }),
    protocol: s.str({ tag: 2 }),
    error: s.str({ tag: 3 }),
  },
  { required: ['port', 'protocol'] },
);

const loadBalancerStatus = s.obj({
  ingress: s.atomic(
    s.obj({
      ip: s.str({ tag: 1 }),
      hostname: s.str({ tag: 2 }),
      ipMode: s.str({ tag: 3 }),
      ports: s.atomic(portStatus, { tag: 4 }),
    }),
    { tag: 1 },
  ),
});

/**
 * meta/v1 Condition (what ServiceStatus holds), not core/v1's per-kind conditions. Required as
 * Kubernetes' ValidateConditions: message may be empty (and an empty string does not survive Protobuf).
 */
const metaCondition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    observedGeneration: s.int64({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason'] },
);

export const service = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    singular: 'service',
    shortNames: ['svc'],
    categories: ['all'],
    namespaced: true,
    nameRule: 'dns-label',
    subresources: ['status', 'proxy'],
    tableColumns: [
      nameColumn,
      column('Type', 'string', (o) => (o.spec as { type?: string } | undefined)?.type ?? ''),
      column('Cluster-IP', 'string', (o) => (o.spec as { clusterIP?: string } | undefined)?.clusterIP || NONE),
      column('External-IP', 'string', serviceExternalIp),
      column('Port(s)', 'string', servicePorts),
      ageColumn,
      wideColumn(
        'Selector',
        'string',
        (o) =>
          Object.entries((o.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || NONE,
      ),
    ],
    schema: objectSchema({
      spec: s.obj(
        {
          ports: s.keyed(servicePort, ['port', 'protocol'], { tag: 1 }),
          selector: s.map(s.str(), { tag: 2, mapType: 'atomic' }),
          clusterIP: s.str({ tag: 3 }),
          clusterIPs: s.atomic(s.str(), { tag: 18 }),
          type: s.str({ tag: 4, enum: ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] }),
          externalIPs: s.atomic(s.str(), { tag: 5 }),
          sessionAffinity: s.str({ tag: 7, enum: ['ClientIP', 'None'] }),
          loadBalancerIP: s.str({ tag: 8 }),
          loadBalancerSourceRanges: s.atomic(s.str(), { tag: 9 }),
          externalName: s.str({ tag: 10 }),
          externalTrafficPolicy: s.str({ tag: 11 }),
          healthCheckNodePort: s.int32({ tag: 12 }),
          publishNotReadyAddresses: s.bool({ tag: 13 }),
          sessionAffinityConfig: { ...sessionAffinityConfig, tag: 14 },
          ipFamilies: s.atomic(s.str(), { tag: 19 }),
          ipFamilyPolicy: s.str({ tag: 17 }),
          allocateLoadBalancerNodePorts: s.bool({ tag: 20 }),
          loadBalancerClass: s.str({ tag: 21 }),
          internalTrafficPolicy: s.str({ tag: 22 }),
          trafficDistribution: s.str({ tag: 23 }),
        },
        { tag: 2 },
      ),
      status: s.obj(
        { loadBalancer: { ...loadBalancerStatus, tag: 1 }, conditions: s.keyed(metaCondition, ['type'], { tag: 2 }) },
        { tag: 3 },
      ),
    }),
  });
