import { builtinCatalog, s, type ObjectSchema } from '@svc/api';
import {
  checkSchema,
  decodeEnvelope,
  decodeMessage,
  decodeProtobufObject,
  encodeMessage,
  encodeProtobufObject,
} from '@svc/machinery';

const catalog = builtinCatalog();
const schemaOf = (plural: string): ObjectSchema => catalog.lookup('', 'v1', plural)?.schema as ObjectSchema;

function roundTrip(obj: Record<string, unknown>, schema: ObjectSchema): Record<string, unknown> {
  return decodeProtobufObject(
    encodeProtobufObject(obj, schema, { apiVersion: String(obj.apiVersion), kind: String(obj.kind) }),
    schema,
  );
}

const heartbeat = '2026-11-21T22:13:20Z';
const transition = '2026-11-21T20:00:00Z';
const cond = (type: string, status: string, { reason, message }: { reason: string; message: string }) => ({
  type,
  status,
  lastHeartbeatTime: heartbeat,
  lastTransitionTime: transition,
  reason,
  message,
});

/** The status svclet's NodeStatusManager writes (node-status.ts computeStatus). */
const svcletStatus = {
  capacity: { cpu: '2', memory: '8048236Ki', pods: '110', 'ephemeral-storage': '102687672Ki', 'hugepages-1Gi': '0' },
  allocatable: { cpu: '2', memory: '7945836Ki', pods: '110', 'ephemeral-storage': '94636958145', 'hugepages-1Gi': '0' },
  conditions: [
    cond('MemoryPressure', 'False', {
      reason: 'AgentHasSufficientMemory',
      message: 'agent has sufficient memory available',
    }),
    cond('DiskPressure', 'False', { reason: 'AgentHasNoDiskPressure', message: 'agent has no disk pressure' }),
    cond('PIDPressure', 'False', { reason: 'AgentHasSufficientPID', message: 'agent has sufficient PID available' }),
    cond('Ready', 'True', { reason: 'AgentReady', message: 'agent is posting ready status' }),
  ],
  addresses: [
    { type: 'InternalIP', address: '10.0.0.5' },
    { type: 'Hostname', address: 'worker-1' },
  ],
  daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
  nodeInfo: {
    machineID: 'f0e1d2c3b4a5968778695a4b3c2d1e0f',
    systemUUID: 'ec2a6d5e-0c8c-4a52-9f1e-6b2d3c4e5f60',
    bootID: '5d1c8f4a-2b3e-4c6d-8e9f-0a1b2c3d4e5f',
    kernelVersion: '6.8.0-45-generic',
    osImage: 'Ubuntu 24.04.1 LTS',
    containerRuntimeVersion: 'containerd://1.7.22',
    kubeletVersion: 'v1.31.0',
    kubeProxyVersion: 'v1.31.0',
    operatingSystem: 'linux',
    architecture: 'amd64',
  },
};

const node = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'worker-1',
    uid: '8d1f0c3e-5b7a-4f1e-9a2b-3c4d5e6f7a8b',
    resourceVersion: '812',
    labels: { 'example.com/role': 'worker' },
  },
  spec: {
    podCIDR: '10.244.1.0/24',
    podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'],
    providerID: 'example://worker-1',
    unschedulable: true,
    taints: [
      { key: 'example.com/not-ready', effect: 'NoSchedule' },
      { key: 'dedicated', value: 'gpu', effect: 'NoExecute', timeAdded: transition },
    ],
    configSource: { configMap: { namespace: 'kube-config', name: 'node-config', kubeletConfigKey: 'kubelet' } },
  },
  status: {
    ...svcletStatus,
    phase: 'Running',
    nodeInfo: { ...svcletStatus.nodeInfo, swap: { capacity: 4294967296 } },
    images: [
      {
        names: ['registry.example/app@sha256:0123456789abcdef', 'registry.example/app:1.2.3'],
        sizeBytes: 123456789012,
      },
      { names: ['registry.example/pause:3.10'], sizeBytes: 320368 },
    ],
    volumesInUse: ['example.com/csi^vol-1'],
    volumesAttached: [{ name: 'example.com/csi^vol-1', devicePath: '/dev/xvdba' }],
    config: {
      assigned: {
        configMap: {
          namespace: 'kube-config',
          name: 'node-config',
          uid: 'c1',
          resourceVersion: '17',
          kubeletConfigKey: 'kubelet',
        },
      },
      active: {
        configMap: {
          namespace: 'kube-config',
          name: 'node-config',
          uid: 'c1',
          resourceVersion: '16',
          kubeletConfigKey: 'kubelet',
        },
      },
      lastKnownGood: {
        configMap: {
          namespace: 'kube-config',
          name: 'node-config',
          uid: 'c1',
          resourceVersion: '15',
          kubeletConfigKey: 'kubelet',
        },
      },
      error: 'failed to load the assigned config',
    },
    runtimeHandlers: [
      { features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
      { name: 'gvisor' },
    ],
    features: { supplementalGroupsPolicy: true },
  },
};

const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', uid: '2f3e4d5c-6b7a-4988-a7b6-c5d4e3f2a1b0', resourceVersion: '99' },
  spec: {
    ports: [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 },
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: 'dns', nodePort: 30053 },
    ],
    selector: { app: 'web' },
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    type: 'LoadBalancer',
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 31000,
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    allocateLoadBalancerNodePorts: true,
    internalTrafficPolicy: 'Cluster',
  },
  status: {
    loadBalancer: {
      ingress: [
        {
          ip: '203.0.113.10',
          ipMode: 'VIP',
          ports: [
            { port: 80, protocol: 'TCP' },
            { port: 53, protocol: 'UDP', error: 'example.com/PortUnavailable' },
          ],
        },
        { hostname: 'lb.example.net', ipMode: 'Proxy' },
      ],
    },
    conditions: [
      {
        type: 'LoadBalancerReady',
        status: 'True',
        observedGeneration: 3,
        lastTransitionTime: transition,
        reason: 'Provisioned',
        message: '',
      },
    ],
  },
};

describe('Node and Service have a Protobuf form', () => {
  it('a Node with every status part round-trips', () => {
    expect(roundTrip(node, schemaOf('nodes'))).toEqual(node);
  });

  it('a Node status exactly as svclet writes it round-trips (empty strings come back absent)', () => {
    const written = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'worker-1' },
      status: { ...svcletStatus, nodeInfo: { ...svcletStatus.nodeInfo, kubeProxyVersion: '' } },
    };
    const { kubeProxyVersion: _empty, ...nodeInfo } = written.status.nodeInfo;
    expect(roundTrip(written, schemaOf('nodes'))).toEqual({ ...written, status: { ...written.status, nodeInfo } });
  });

  it('a Service with sessionAffinityConfig and a load balancer status round-trips', () => {
    const { message: _empty, ...condition } = service.status.conditions[0] ?? {};
    expect(roundTrip(service, schemaOf('services'))).toEqual({
      ...service,
      status: { ...service.status, conditions: [condition] },
    });
  });

  it('values Kubernetes allows to be empty still validate after Protobuf drops the empty strings', () => {
    const n = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: { volumesAttached: [{ name: 'example.com/csi^vol-2', devicePath: '' }] },
    };
    expect(checkSchema(roundTrip(n, schemaOf('nodes')), schemaOf('nodes')).errors).toEqual([]);
    expect(checkSchema(roundTrip(service, schemaOf('services')), schemaOf('services')).errors).toEqual([]);
  });

  it('the load balancer status the Service strategy sets on create ({}) is encodable', () => {
    const created = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a', namespace: 'default' },
      spec: { ports: [{ port: 80 }] },
      status: { loadBalancer: {} },
    };
    expect(roundTrip(created, schemaOf('services'))).toEqual(created);
  });
});

/**
 * The wire read back through schemas written here with Kubernetes' numbers (k8s.io/api
 * core/v1 generated.proto) and names of their own: a wrong number in the resource schema
 * leaves these empty.
 */
describe('Node and Service field numbers on the wire', () => {
  const probeNode = s.obj({
    spec: s.obj({ cfg: s.obj({ cm: s.obj({ key: s.str({ tag: 5 }) }, { tag: 2 }) }, { tag: 6 }) }, { tag: 2 }),
    status: s.obj(
      {
        conds: s.arr(s.obj({ heartbeat: s.time({ tag: 3 }) }), { tag: 4 }),
        daemons: s.obj({ kubelet: s.obj({ port: s.int32({ tag: 1 }) }, { tag: 1 }) }, { tag: 6 }),
        info: s.obj({ swap: s.obj({ capacity: s.int64({ tag: 1 }) }, { tag: 11 }) }, { tag: 7 }),
        imgs: s.arr(s.obj({ names: s.arr(s.str(), { tag: 1 }), size: s.int64({ tag: 2 }) }), { tag: 8 }),
        attached: s.arr(s.obj({ device: s.str({ tag: 2 }) }), { tag: 10 }),
        cfg: s.obj(
          { good: s.obj({ cm: s.obj({ rv: s.str({ tag: 4 }) }, { tag: 2 }) }, { tag: 3 }), err: s.str({ tag: 4 }) },
          { tag: 11 },
        ),
        handlers: s.arr(s.obj({ name: s.str({ tag: 1 }), f: s.obj({ userns: s.bool({ tag: 2 }) }, { tag: 2 }) }), {
          tag: 12,
        }),
        feats: s.obj({ sgp: s.bool({ tag: 1 }) }, { tag: 13 }),
      },
      { tag: 3 },
    ),
  });

  it('Node', () => {
    const env = decodeEnvelope(encodeProtobufObject(node, schemaOf('nodes'), { apiVersion: 'v1', kind: 'Node' }));
    expect([env.apiVersion, env.kind]).toEqual(['v1', 'Node']);
    const wire = decodeMessage(env.raw, probeNode) as { spec: unknown; status: Record<string, unknown> };
    expect(wire.spec).toEqual({ cfg: { cm: { key: 'kubelet' } } });
    expect(wire.status).toEqual({
      conds: svcletStatus.conditions.map(() => ({ heartbeat })),
      daemons: { kubelet: { port: 10250 } },
      info: { swap: { capacity: 4294967296 } },
      imgs: node.status.images.map((i) => ({ names: i.names, size: i.sizeBytes })),
      attached: [{ device: '/dev/xvdba' }],
      cfg: { good: { cm: { rv: '15' } }, err: 'failed to load the assigned config' },
      handlers: [{ f: { userns: true } }, { name: 'runc', f: { userns: false } }, { name: 'gvisor' }],
      feats: { sgp: true },
    });
  });

  it('ContainerImage.sizeBytes is field 2 (varint) and DaemonEndpoint.Port field 1, byte for byte', () => {
    const nodes = schemaOf('nodes');
    const status = nodes.properties.status as ObjectSchema;
    const images = encodeMessage({ images: [{ sizeBytes: 300 }] }, status);
    // images (8, LEN) { sizeBytes (2, VARINT) 300 }
    expect([...images]).toEqual([(8 << 3) | 2, 3, (2 << 3) | 0, 0xac, 0x02]);
    const daemons = encodeMessage({ daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } }, status);
    // daemonEndpoints (6, LEN) { kubeletEndpoint (1, LEN) { Port (1, VARINT) 10250 } }
    expect([...daemons]).toEqual([(6 << 3) | 2, 5, (1 << 3) | 2, 3, (1 << 3) | 0, 0x8a, 0x50]);
  });

  it('Service', () => {
    const probe = s.obj({
      spec: s.obj(
        { affinity: s.obj({ clientIP: s.obj({ timeout: s.int32({ tag: 1 }) }, { tag: 1 }) }, { tag: 14 }) },
        { tag: 2 },
      ),
      status: s.obj(
        {
          lb: s.obj(
            {
              ingress: s.arr(
                s.obj({
                  ip: s.str({ tag: 1 }),
                  host: s.str({ tag: 2 }),
                  mode: s.str({ tag: 3 }),
                  ports: s.arr(s.obj({ port: s.int32({ tag: 1 }), proto: s.str({ tag: 2 }), err: s.str({ tag: 3 }) }), {
                    tag: 4,
                  }),
                }),
                { tag: 1 },
              ),
            },
            { tag: 1 },
          ),
          conds: s.arr(s.obj({ gen: s.int64({ tag: 3 }), at: s.time({ tag: 4 }) }), { tag: 2 }),
        },
        { tag: 3 },
      ),
    });
    const wire = decodeMessage(
      decodeEnvelope(encodeProtobufObject(service, schemaOf('services'), { apiVersion: 'v1', kind: 'Service' })).raw,
      probe,
    );
    expect(wire).toEqual({
      spec: { affinity: { clientIP: { timeout: 10800 } } },
      status: {
        lb: {
          ingress: [
            {
              ip: '203.0.113.10',
              mode: 'VIP',
              ports: [
                { port: 80, proto: 'TCP' },
                { port: 53, proto: 'UDP', err: 'example.com/PortUnavailable' },
              ],
            },
            { host: 'lb.example.net', mode: 'Proxy' },
          ],
        },
        conds: [{ gen: 3, at: transition }],
      },
    });
  });
});
