import { builtinCatalog, group, s, type ObjectSchema } from '@svc/api';
import { decodeEnvelope, decodeMessage, decodeProtobufObject, decodeWatchFrames, PROTOBUF_MAGIC } from './protobuf.js';
import {
  encodeMessage,
  encodeProtobufList,
  encodeProtobufObject,
  encodeProtobufStatus,
  encodeWatchEventFrame,
  listSchemaOf,
  NotEncodable,
  statusSchema,
} from './protobuf-encode.js';

const catalog = builtinCatalog();
const schemaOf = (g: string, plural: string): ObjectSchema => catalog.lookup(g, 'v1', plural)?.schema as ObjectSchema;

/** A made-up kind with a loosely typed field (`blob`), an unnumbered one and a numbered one. */
const looseSchema = (): ObjectSchema => ({
  type: 'object',
  properties: {
    metadata: schemaOf('', 'configmaps').properties.metadata as ObjectSchema,
    spec: s.obj({ typed: s.str({ tag: 1 }), unnumbered: s.str(), blob: s.any({ tag: 3 }) }, { tag: 2 }),
  },
});

function roundTrip(obj: Record<string, unknown>, schema: ObjectSchema): Record<string, unknown> {
  return decodeProtobufObject(
    encodeProtobufObject(obj, schema, { apiVersion: String(obj.apiVersion), kind: String(obj.kind) }),
    schema,
  );
}

const meta = {
  name: 'cm',
  namespace: 'default',
  uid: '1b0c4b4e-8d56-4d7e-9a59-1f0a1f9e0c11',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2026-11-21T22:13:20Z',
  labels: { b: '2', a: '1' },
  annotations: { note: '' },
  ownerReferences: [
    { apiVersion: 'v1', kind: 'Namespace', name: 'default', uid: 'u-1', controller: true, blockOwnerDeletion: false },
  ],
  finalizers: ['example.com/keep', 'example.com/other'],
  managedFields: [
    {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2026-11-21T22:13:21Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {} } },
    },
  ],
};

describe('Protobuf answers: encoding is the inverse of decoding', () => {
  it('ConfigMap: metadata (labels, owner references, managed fields, timestamps), data, binaryData, immutable', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta,
      data: { a: 'b', empty: '' },
      binaryData: { bin: 'AQID', none: '' },
      immutable: false,
    };
    expect(roundTrip(cm, schemaOf('', 'configmaps'))).toEqual(cm);
  });

  it('Secret: bytes data, stringData and type', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'ns' },
      type: 'Opaque',
      data: { password: Buffer.from('hunter2').toString('base64') },
      stringData: { x: 'y' },
      immutable: true,
    };
    expect(roundTrip(secret, schemaOf('', 'secrets'))).toEqual(secret);
  });

  it('Namespace: spec finalizers and status phase; deletion timestamp', () => {
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', deletionTimestamp: '2026-11-21T23:00:00Z', deletionGracePeriodSeconds: 0 },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Terminating' },
    };
    const decoded = roundTrip(ns, schemaOf('', 'namespaces'));
    expect(decoded).toEqual(ns);
  });

  it('Lease: MicroTime with microseconds, int32 fields', () => {
    const lease = {
      apiVersion: `${group('coordination')}/v1`,
      kind: 'Lease',
      metadata: { name: 'leader', namespace: 'kube-system' },
      spec: {
        holderIdentity: 'cm-1',
        leaseDurationSeconds: 15,
        acquireTime: '2026-11-21T23:00:00.000001Z',
        renewTime: '2026-11-21T23:00:10.123456Z',
        leaseTransitions: 7,
      },
    };
    expect(roundTrip(lease, schemaOf(group('coordination'), 'leases'))).toEqual(lease);
  });

  it('MicroTime on a whole second decodes with six zero digits (as Go prints it); Time without any', () => {
    const lease = {
      apiVersion: `${group('coordination')}/v1`,
      kind: 'Lease',
      metadata: { name: 'leader', namespace: 'kube-system', creationTimestamp: '2026-11-21T23:00:00Z' },
      spec: { renewTime: '2026-11-21T23:00:10Z' },
    };
    const decoded = roundTrip(lease, schemaOf(group('coordination'), 'leases')) as typeof lease;
    expect(decoded.spec.renewTime).toBe('2026-11-21T23:00:10.000000Z');
    expect(decoded.metadata.creationTimestamp).toBe('2026-11-21T23:00:00Z');
  });

  it('writes fields in field-number order and map entries in key order (as Go does)', () => {
    const schema = schemaOf('', 'configmaps');
    const bytes = Buffer.from(encodeMessage({ immutable: true, data: { z: '1', a: '2' } }, schema));
    // data (2) entries a then z, then immutable (4).
    expect(bytes.indexOf(Buffer.from('a'))).toBeLessThan(bytes.indexOf(Buffer.from('z')));
    expect(bytes[bytes.length - 2]).toBe((4 << 3) | 0);
  });

  it('lists: {metadata=1 ListMeta, items=2} inside the envelope with the list kind', () => {
    const schema = schemaOf('', 'configmaps');
    const list = {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '99', continue: 'abc', remainingItemCount: 3 },
      items: [{ metadata: { name: 'a' }, data: { k: 'v' } }, { metadata: { name: 'b' } }],
    };
    const env = decodeEnvelope(encodeProtobufList(list, schema, { apiVersion: 'v1', kind: 'ConfigMapList' }));
    expect([env.apiVersion, env.kind]).toEqual(['v1', 'ConfigMapList']);
    expect(decodeMessage(env.raw, listSchemaOf(schema))).toEqual({ metadata: list.metadata, items: list.items });
  });

  it('an empty list decodes back to no items', () => {
    const schema = schemaOf('', 'secrets');
    const env = decodeEnvelope(
      encodeProtobufList({ metadata: { resourceVersion: '5' }, items: [] }, schema, {
        apiVersion: 'v1',
        kind: 'SecretList',
      }),
    );
    expect(decodeMessage(env.raw, listSchemaOf(schema))).toEqual({ metadata: { resourceVersion: '5' } });
  });

  it('Status with details and causes', () => {
    const status = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Failure',
      message: 'ConfigMap "x" is invalid',
      reason: 'Invalid',
      code: 422,
      details: {
        name: 'x',
        kind: 'ConfigMap',
        causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'data' }],
        retryAfterSeconds: 2,
      },
    };
    const env = decodeEnvelope(encodeProtobufStatus(status));
    expect([env.apiVersion, env.kind]).toEqual(['v1', 'Status']);
    const { apiVersion: _a, kind: _k, ...rest } = status;
    expect(decodeMessage(env.raw, statusSchema)).toEqual(rest);
  });

  it('starts with the magic number', () => {
    const bytes = encodeProtobufObject({ metadata: { name: 'x' } }, schemaOf('', 'configmaps'), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    expect(bytes.subarray(0, 4).equals(PROTOBUF_MAGIC)).toBe(true);
  });

  it('IntOrString: integers and strings; Quantity as its string', () => {
    const svc = schemaOf('', 'services');
    const obj = {
      metadata: { name: 's' },
      spec: {
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'named', port: 81, targetPort: 'web' },
        ],
      },
    };
    const back = decodeMessage(encodeMessage(obj, svc), svc);
    expect((back.spec as { ports: unknown[] }).ports).toEqual(obj.spec.ports);
  });

  it('loosely typed values that are present cannot be encoded; absent ones are fine', () => {
    const loose = looseSchema();
    expect(() => encodeMessage({ metadata: { name: 'x' }, spec: { blob: [{ name: 'gpu' }] } }, loose)).toThrow(
      NotEncodable,
    );
    expect(() => encodeMessage({ metadata: { name: 'x' }, spec: { typed: 'yes' } }, loose)).not.toThrow();
  });

  it('watch events: length-prefixed WatchEvent frames, partial frames left over', () => {
    const schema = schemaOf('', 'configmaps');
    const obj = encodeProtobufObject({ metadata: { name: 'a', resourceVersion: '7' } }, schema, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    const first = encodeWatchEventFrame('ADDED', obj);
    const frames = Buffer.concat([first, encodeWatchEventFrame('DELETED', obj)]);
    expect(frames.readUInt32BE(0)).toBe(first.length - 4);
    const { events, used } = decodeWatchFrames(frames.subarray(0, frames.length - 3));
    expect(events.map((e) => e.type)).toEqual(['ADDED']);
    expect(used).toBe(first.length);
    const all = decodeWatchFrames(frames);
    expect(all.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(decodeProtobufObject(all.events[1]?.object ?? new Uint8Array(), schema)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', resourceVersion: '7' },
    });
  });
});

describe('Protobuf never drops a value', () => {
  it('a value whose field has no Protobuf number, or is typed loosely, is NotEncodable, so callers fall back to JSON', () => {
    const loose = looseSchema();
    const obj = (spec: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'X',
      metadata: { name: 'x' },
      spec: { typed: 't', ...spec },
    });
    expect(() => encodeProtobufObject(obj({ unnumbered: 'u' }), loose, { apiVersion: 'v1', kind: 'X' })).toThrow(
      NotEncodable,
    );
    expect(() => encodeProtobufObject(obj({ unnumbered: 'u' }), loose, { apiVersion: 'v1', kind: 'X' })).toThrow(
      /spec\.unnumbered/,
    );
    expect(() => encodeProtobufObject(obj({ blob: { a: 1 } }), loose, { apiVersion: 'v1', kind: 'X' })).toThrow(
      /spec\.blob/,
    );
    expect(roundTrip(obj({}), loose)).toEqual(obj({}));
  });

  it('every pod field has its number now: volumes of every source, ephemeral containers, resource claims, resize policies', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
            resources: { claims: [{ name: 'gpu', request: 'r' }] },
            volumeDevices: [{ name: 'd', devicePath: '/dev/x' }],
          },
        ],
        ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'c', stdin: true }],
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 't' }],
        securityContext: {
          appArmorProfile: { type: 'RuntimeDefault' },
          supplementalGroupsPolicy: 'Strict',
          seLinuxChangePolicy: 'Recursive',
        },
        volumes: [
          { name: 'n', nfs: { server: 'nfs.local', path: '/export', readOnly: true } },
          {
            name: 'i',
            iscsi: {
              targetPortal: '10.0.0.1:3260',
              iqn: 'iqn.x',
              lun: 0,
              chapAuthSession: true,
              secretRef: { name: 's' },
            },
          },
          { name: 'c', csi: { driver: 'x.csi', volumeAttributes: { a: 'b' }, nodePublishSecretRef: { name: 's' } } },
          {
            name: 'e',
            ephemeral: {
              volumeClaimTemplate: {
                metadata: { labels: { a: 'b' } },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              },
            },
          },
          { name: 'img', image: { reference: 'busybox', pullPolicy: 'IfNotPresent' } },
          {
            name: 'p',
            projected: { sources: [{ clusterTrustBundle: { signerName: 'x/y', path: 'ca.pem', optional: true } }] },
          },
        ],
      },
      status: {
        resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'p-gpu-1' }],
        containerStatuses: [
          {
            name: 'c',
            ready: true,
            restartCount: 0,
            image: 'busybox',
            imageID: 'sha256:1',
            allocatedResources: { cpu: '100m' },
            resources: { limits: { cpu: '1' } },
            volumeMounts: [{ name: 'n', mountPath: '/n', readOnly: true }],
            user: { linux: { uid: 1000, gid: 1000, supplementalGroups: [1, 2] } },
            allocatedResourcesStatus: [
              { name: 'claim:gpu/r', resources: [{ resourceID: 'dev-0', health: 'Healthy' }] },
            ],
          },
        ],
      },
    };
    expect(roundTrip(pod, schemaOf('', 'pods'))).toEqual(pod);
  });

  it("a field the schema does not know is NotEncodable too; apiVersion and kind are the envelope's", () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' }, surprise: 1 };
    expect(() => encodeProtobufObject(cm, schemaOf('', 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap' })).toThrow(
      /surprise/,
    );
    const { surprise: _unused, ...known } = cm;
    expect(roundTrip(known, schemaOf('', 'configmaps'))).toEqual(known);
  });
});

describe('embedded messages (fields JSON inlines and the proto nests)', () => {
  const containerProps = (): Record<string, ObjectSchema> => {
    const spec = schemaOf('', 'pods').properties.spec as ObjectSchema;
    const containers = spec.properties.containers as unknown as { items: ObjectSchema };
    return containers.items.properties as Record<string, ObjectSchema>;
  };

  it('a Probe: its handler goes in field 1 (ProbeHandler: exec 1, httpGet 2, tcpSocket 3, grpc 4), its own fields from 2', () => {
    const probe = containerProps().livenessProbe as ObjectSchema;
    const value = {
      httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
      initialDelaySeconds: 3,
      periodSeconds: 10,
      failureThreshold: 2,
    };
    const bytes = encodeMessage(value, probe);
    expect(decodeMessage(bytes, probe)).toEqual(value);
    // Read back through a schema that spells Kubernetes' messages out.
    const wire = decodeMessage(
      bytes,
      s.obj({
        handler: s.obj(
          { httpGet: s.obj({ path: s.str({ tag: 1 }), port: s.intOrString({ tag: 2 }) }, { tag: 2 }) },
          { tag: 1 },
        ),
        initialDelaySeconds: s.int32({ tag: 2 }),
        periodSeconds: s.int32({ tag: 4 }),
        failureThreshold: s.int32({ tag: 6 }),
      }),
    );
    expect(wire).toEqual({
      handler: { httpGet: { path: '/healthz', port: 8080 } },
      initialDelaySeconds: 3,
      periodSeconds: 10,
      failureThreshold: 2,
    });
    // Field 1, length-delimited, first on the wire; no handler set, no field 1.
    expect(bytes[0]).toBe((1 << 3) | 2);
    expect(encodeMessage({ periodSeconds: 5 }, probe)).toEqual(Uint8Array.from([(4 << 3) | 0, 5]));
    for (const handler of [
      { exec: { command: ['cat', '/tmp/ok'] } },
      { tcpSocket: { port: 'http' } },
      { grpc: { port: 9090, service: 'health' } },
    ]) {
      expect(decodeMessage(encodeMessage(handler, probe), probe)).toEqual(handler);
    }
  });

  it("env sources: a ConfigMap's or Secret's name sits in the embedded LocalObjectReference (field 1)", () => {
    const container = s.obj(containerProps());
    const value = {
      name: 'c',
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k', optional: true } } },
        { name: 'B', valueFrom: { secretKeyRef: { name: 'sec', key: 'pw' } } },
        { name: 'C', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
        { name: 'D', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      ],
      envFrom: [{ prefix: 'X_', configMapRef: { name: 'cm' } }, { secretRef: { name: 'sec', optional: false } }],
    };
    expect(decodeMessage(encodeMessage(value, container), container)).toEqual(value);
    const keySelector = (
      (containerProps().env as unknown as { items: ObjectSchema }).items.properties.valueFrom as ObjectSchema
    ).properties.configMapKeyRef as ObjectSchema;
    const bytes = encodeMessage({ name: 'cm', key: 'k' }, keySelector);
    // ConfigMapKeySelector{localObjectReference(1){name(1)}, key(2)}
    expect(Buffer.from(bytes)).toEqual(Buffer.from([0x0a, 4, 0x0a, 2, 0x63, 0x6d, 0x12, 1, 0x6b]));
  });

  it('container states (waiting, running, terminated) round-trip', () => {
    const spec = schemaOf('', 'pods').properties.status as ObjectSchema;
    const statuses = (spec.properties.containerStatuses as unknown as { items: ObjectSchema }).items;
    const value = {
      name: 'c',
      ready: false,
      restartCount: 2,
      image: 'busybox',
      imageID: 'sha256:1',
      containerID: 'svc-runtime://abc',
      started: false,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container' } },
      lastState: {
        terminated: {
          exitCode: 3,
          reason: 'Error',
          startedAt: '2026-11-22T04:00:00Z',
          finishedAt: '2026-11-22T04:00:01Z',
          containerID: 'svc-runtime://abc',
        },
      },
    };
    expect(decodeMessage(encodeMessage(value, statuses), statuses)).toEqual(value);
    const running = { ...value, ready: true, state: { running: { startedAt: '2026-11-22T04:00:21Z' } } };
    expect(decodeMessage(encodeMessage(running, statuses), statuses)).toEqual(running);
    // A required string keeps its empty value (validation would otherwise find it missing); an optional one is omitted, as JSON's omitempty does.
    const creating = {
      name: 'c',
      ready: false,
      restartCount: 0,
      image: 'busybox',
      imageID: '',
      containerID: '',
      state: { waiting: { reason: 'ContainerCreating' } },
    };
    const { containerID: _omitted, ...expected } = creating;
    expect(decodeMessage(encodeMessage(creating, statuses), statuses)).toEqual(expected);
  });

  it('a pod with affinity, security contexts, DNS config, host aliases, readiness and scheduling gates, spread constraints and os round-trips', () => {
    const term = { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'svc.io/hostname', namespaces: ['a'] };
    const p = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sleep', '60'],
            securityContext: {
              runAsUser: 1000,
              runAsNonRoot: true,
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
              seccompProfile: { type: 'RuntimeDefault' },
            },
          },
        ],
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 3000,
          fsGroup: 2000,
          supplementalGroups: [4000],
          sysctls: [{ name: 'net.core.somaxconn', value: '1024' }],
          seLinuxOptions: { level: 's0:c123,c456' },
        },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }],
                  matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n0'] }],
                },
              ],
            },
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 10, preference: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
            ],
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
          },
          podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] },
        },
        dnsConfig: { nameservers: ['1.1.1.1'], searches: ['ns.svc'], options: [{ name: 'ndots', value: '2' }] },
        hostAliases: [{ ip: '127.0.0.1', hostnames: ['foo.local'] }],
        readinessGates: [{ conditionType: 'example.com/ready' }],
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
            minDomains: 2,
          },
        ],
        os: { name: 'linux' },
        schedulingGates: [{ name: 'example.com/wait' }],
      },
    };
    expect(roundTrip(p, schemaOf('', 'pods'))).toEqual(p);
    // PodAffinityTerm.topologyKey is field 3 (namespaces 2), WeightedPodAffinityTerm{weight 1, podAffinityTerm 2}.
    const anti = ((schemaOf('', 'pods').properties.spec as ObjectSchema).properties.affinity as ObjectSchema).properties
      .podAntiAffinity as ObjectSchema;
    const wire = decodeMessage(
      encodeMessage(p.spec.affinity.podAntiAffinity, anti),
      s.obj({
        preferred: s.arr(
          s.obj({
            weight: s.int32({ tag: 1 }),
            term: s.obj({ ns: s.arr(s.str(), { tag: 2 }), key: s.str({ tag: 3 }) }, { tag: 2 }),
          }),
          { tag: 2 },
        ),
      }),
    );
    expect(wire).toEqual({ preferred: [{ weight: 100, term: { ns: ['a'], key: 'svc.io/hostname' } }] });
  });

  it("volumes: the common sources sit in the embedded VolumeSource (field 2) under Kubernetes' numbers", () => {
    const spec = schemaOf('', 'pods').properties.spec as ObjectSchema;
    const volume = (spec.properties.volumes as unknown as { items: ObjectSchema }).items;
    const volumes = [
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
      {
        name: 'cfg',
        configMap: {
          name: 'app-config',
          items: [{ key: 'a', path: 'a.conf', mode: 420 }],
          defaultMode: 420,
          optional: true,
        },
      },
      { name: 'sec', secret: { secretName: 'tls', defaultMode: 256 } },
      { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
      {
        name: 'info',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } },
          ],
        },
      },
      {
        name: 'token',
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { audience: 'api', expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'root-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { secret: { name: 'extra', optional: true } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
        },
      },
    ];
    for (const v of volumes) expect(decodeMessage(encodeMessage(v, volume), volume)).toEqual(v);
    // Volume{name(1), volumeSource(2){configMap(19){localObjectReference(1){name(1)}}}}
    const bytes = Buffer.from(encodeMessage({ name: 'v', configMap: { name: 'c' } }, volume));
    expect(bytes).toEqual(Buffer.from([0x0a, 1, 0x76, 0x12, 8, 0x9a, 0x01, 5, 0x0a, 3, 0x0a, 1, 0x63]));
  });

  it("a container's lifecycle handlers (exec, httpGet, tcpSocket, sleep) round-trip", () => {
    const lifecycle = containerProps().lifecycle as ObjectSchema;
    const value = { postStart: { exec: { command: ['sh', '-c', 'echo up'] } }, preStop: { sleep: { seconds: 5 } } };
    expect(decodeMessage(encodeMessage(value, lifecycle), lifecycle)).toEqual(value);
  });
});
