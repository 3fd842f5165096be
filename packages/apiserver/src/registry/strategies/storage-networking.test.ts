// StorageClass, PersistentVolume, PersistentVolumeClaim, IngressClass and Ingress without a
// server: Kubernetes 1.32's v1 defaults, its validation paths and messages, the update rules
// (immutable fields, claim resize), quantities compared exactly, and the Protobuf field numbers of
// generated.proto (PersistentVolumeSource inlined at 2 of the spec, IngressRuleValue at 2 of a rule).
import {
  builtinCatalog,
  fieldErrorMessage,
  group,
  s,
  type ApiObject,
  type FieldError,
  type ObjectSchema,
} from '@svc/api';
import { decodeMessage, encodeMessage } from '@svc/machinery';
import type { Strategy, StrategyContext } from '../strategy.js';
import { ingressClassStrategy, ingressStrategy, isWildcardDns1123Subdomain } from './ingress.js';
import { persistentVolumeStrategy } from './persistent-volume.js';
import { persistentVolumeClaimStrategy } from './persistent-volume-claim.js';
import { storageClassStrategy } from './storage-class.js';
import { compareQuantities } from './storage-quantity.js';

const ctx: StrategyContext = { subresource: '' };
const statusCtx: StrategyContext = { subresource: 'status' };
const obj = (o: Record<string, unknown>): ApiObject => ({ metadata: { name: 'x' }, ...o }) as ApiObject;
const messages = (errs: FieldError[] | Promise<FieldError[]> | undefined): Promise<string[]> =>
  Promise.resolve(errs ?? []).then((e) => e.map(fieldErrorMessage));

function created(strategy: Strategy, o: ApiObject): ApiObject {
  strategy.prepareForCreate?.(o, ctx);
  return o;
}
/** The update's errors after the strategy's prepare step; `sub` is the subresource written. */
function updated(strategy: Strategy, next: ApiObject, o: { old: ApiObject; sub?: 'status' }): Promise<string[]> {
  const { old } = o;
  const c = o.sub ? statusCtx : ctx;
  if (c.subresource === 'status') strategy.prepareForStatusUpdate?.(next, old, c);
  else strategy.prepareForUpdate?.(next, old, c);
  return messages(strategy.validateUpdate?.(next, old, c));
}

const pvc = (spec: Record<string, unknown> = {}): ApiObject =>
  obj({
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  });

describe('StorageClass', () => {
  it("defaults reclaimPolicy Delete and volumeBindingMode Immediate; validates with Kubernetes' messages", async () => {
    const sc = created(storageClassStrategy, obj({ provisioner: 'example.com/disk' }));
    expect(sc).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    expect(await messages(storageClassStrategy.validate?.(sc, ctx))).toEqual([]);
    const bad = created(
      storageClassStrategy,
      obj({
        provisioner: 'Example.com/Bad Name',
        reclaimPolicy: 'Recycle',
        volumeBindingMode: 'Later',
        parameters: { '': 'x' },
        allowedTopologies: [
          { matchLabelExpressions: [{ key: 'zone', values: ['a', 'a'] }] },
          { matchLabelExpressions: [{ key: 'zone', values: ['a', 'a'] }] },
        ],
      }),
    );
    expect(await messages(storageClassStrategy.validate?.(bad, ctx))).toEqual([
      `provisioner: Invalid value: "example.com/bad name": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      'parameters: Invalid value: "": field can not be empty.',
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
      'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
      'allowedTopologies[1].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
      'allowedTopologies[1].matchLabelExpressions: Duplicate value: ""',
    ]);
    expect(await messages(storageClassStrategy.validate?.(created(storageClassStrategy, obj({})), ctx))).toEqual([
      'provisioner: Required value',
    ]);
  });

  it('keeps parameters, provisioner, reclaimPolicy and volumeBindingMode', async () => {
    const old = created(storageClassStrategy, obj({ provisioner: 'a.io/x', parameters: { type: 'ssd' } }));
    const next = obj({
      provisioner: 'b.io/y',
      parameters: { type: 'hdd' },
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    });
    expect(await updated(storageClassStrategy, next, { old })).toEqual([
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
    const expandable = obj({ ...old, allowVolumeExpansion: true, mountOptions: ['ro'] });
    expect(await updated(storageClassStrategy, expandable, { old })).toEqual([]);
  });
});

describe('PersistentVolume', () => {
  const pv = (spec: Record<string, unknown>): ApiObject =>
    obj({ spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], ...spec } });

  it('defaults Retain, Filesystem, the hostPath type, and a Pending status with its transition time', async () => {
    const v = created(persistentVolumeStrategy, pv({ hostPath: { path: '/data' } }));
    expect(v.spec).toMatchObject({
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
      hostPath: { path: '/data', type: '' },
    });
    expect(v.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: expect.any(String) });
    expect(await messages(persistentVolumeStrategy.validate?.(v, ctx))).toEqual([]);
  });

  it("validates with Kubernetes' paths and messages", async () => {
    const v = created(
      persistentVolumeStrategy,
      obj({
        spec: {
          capacity: { storage: '0', cpu: '1' },
          accessModes: ['ReadWriteOncePod', 'ReadWriteMany', 'Sometimes'],
          persistentVolumeReclaimPolicy: 'Keep',
          local: { path: '/mnt/../etc' },
          nfs: { server: 'nfs', path: 'export' },
          volumeMode: 'Raw',
          storageClassName: 'Fast_SSD',
        },
      }),
    );
    expect(await messages(persistentVolumeStrategy.validate?.(v, ctx))).toEqual([
      'spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
      'spec.capacity: Unsupported value: {"storage":"0","cpu":"1"}: supported values: "storage"',
      'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
      'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
      // Kubernetes checks nfs before local: the first is validated, the second refused.
      'spec.nfs.path: Invalid value: "export": must be an absolute path',
      'spec.local: Forbidden: may not specify more than 1 volume type',
      `spec.storageClassName: Invalid value: "Fast_SSD": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ]);
    const local = created(persistentVolumeStrategy, pv({ local: { path: '/mnt/../etc' } }));
    expect(await messages(persistentVolumeStrategy.validate?.(local, ctx))).toEqual([
      `spec.local.path: Invalid value: "/mnt/../etc": must not contain '..'`,
      'spec.nodeAffinity: Required value: Local volume requires node affinity',
    ]);
    const none = created(persistentVolumeStrategy, obj({ spec: {} }));
    expect(await messages(persistentVolumeStrategy.validate?.(none, ctx))).toEqual([
      'spec.accessModes: Required value',
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: {}: supported values: "storage"',
      'spec: Required value: must specify a volume type',
    ]);
    const csi = created(
      persistentVolumeStrategy,
      pv({
        csi: { driver: 'Disk.CSI', volumeHandle: '', nodePublishSecretRef: { name: 's' } },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Near' }] }] } },
      }),
    );
    expect(await messages(persistentVolumeStrategy.validate?.(csi, ctx))).toEqual([
      'spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
      'spec.csi.volumeHandle: Required value',
      'spec.csi.nodePublishSecretRef.namespace: Required value',
    ]);
  });

  it('keeps the volume source, volume mode and node affinity; status writes move the transition time', async () => {
    const affinity = {
      required: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
    };
    const old = created(persistentVolumeStrategy, pv({ nfs: { server: 'a', path: '/x' }, nodeAffinity: affinity }));
    const next = obj({
      ...old,
      spec: { ...(old.spec as object), nfs: { server: 'b', path: '/x' }, volumeMode: 'Block', nodeAffinity: undefined },
    });
    expect(await updated(persistentVolumeStrategy, next, { old })).toEqual([
      'spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation',
      'volumeMode: Invalid value: "Block": field is immutable',
      'nodeAffinity: Invalid value: "null": field is immutable',
    ]);
    const claimed = obj({ ...old, spec: { ...(old.spec as object), claimRef: { namespace: 'ns', name: 'c' } } });
    expect(await updated(persistentVolumeStrategy, claimed, { old })).toEqual([]);
    const status = obj({ ...old, status: { phase: 'Available' } });
    expect(await updated(persistentVolumeStrategy, status, { old, sub: 'status' })).toEqual([]);
    expect((status.status as { lastPhaseTransitionTime?: string }).lastPhaseTransitionTime).toEqual(expect.any(String));
  });
});

describe('PersistentVolumeClaim', () => {
  it('defaults volumeMode and a Pending status; requires access modes and a storage request', async () => {
    const c = created(persistentVolumeClaimStrategy, pvc());
    expect(c.spec).toMatchObject({ volumeMode: 'Filesystem' });
    expect(c.status).toEqual({ phase: 'Pending' });
    const bad = created(persistentVolumeClaimStrategy, obj({ spec: { resources: { requests: { storage: '-1' } } } }));
    expect(await messages(persistentVolumeClaimStrategy.validate?.(bad, ctx))).toEqual([
      'spec.accessModes: Required value: at least 1 access mode is required',
      'spec.resources[storage]: Invalid value: "-1": must be greater than zero',
    ]);
    const none = created(persistentVolumeClaimStrategy, obj({ spec: { accessModes: ['ReadWriteOnce'] } }));
    expect(await messages(persistentVolumeClaimStrategy.validate?.(none, ctx))).toEqual([
      'spec.resources[storage]: Required value',
    ]);
  });

  it('keeps a data source only for claims and snapshots, mirrored in dataSourceRef', () => {
    const fromClaim = created(
      persistentVolumeClaimStrategy,
      pvc({ dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }),
    );
    expect(fromClaim.spec).toMatchObject({ dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'src' } });
    const other = created(
      persistentVolumeClaimStrategy,
      pvc({ dataSource: { apiGroup: 'x.io', kind: 'Thing', name: 'a' } }),
    );
    expect((other.spec as Record<string, unknown>).dataSource).toBeUndefined();
    const snap = { apiGroup: group('snapshot.storage'), kind: 'VolumeSnapshot', name: 's' };
    expect(created(persistentVolumeClaimStrategy, pvc({ dataSource: snap })).spec).toMatchObject({
      dataSourceRef: snap,
    });
  });

  it('is immutable but for volumeName once, a class where none was, and the request of a bound claim', async () => {
    const old = created(persistentVolumeClaimStrategy, pvc());
    const named = obj({ ...old, spec: { ...(old.spec as object), volumeName: 'pv-1', storageClassName: 'fast' } });
    expect(await updated(persistentVolumeClaimStrategy, named, { old })).toEqual([]);
    const grown = obj({ ...old, spec: { ...(old.spec as object), resources: { requests: { storage: '2Gi' } } } });
    expect(await updated(persistentVolumeClaimStrategy, grown, { old })).toEqual([
      'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
    ]);
    const bound = obj({ ...old, status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
    const boundGrown = obj({
      ...bound,
      spec: { ...(old.spec as object), resources: { requests: { storage: '2Gi' } } },
    });
    expect(await updated(persistentVolumeClaimStrategy, boundGrown, { old: bound })).toEqual([]);
    // RecoverVolumeExpansionFailure (on in 1.32): back down, but above status.capacity.
    const expanded = obj({ ...boundGrown, spec: { ...(boundGrown.spec as object) } });
    const back = obj({
      ...expanded,
      spec: { ...(old.spec as object), resources: { requests: { storage: '1536Mi' } } },
    });
    expect(await updated(persistentVolumeClaimStrategy, back, { old: expanded })).toEqual([]);
    const shrunk = obj({
      ...expanded,
      spec: { ...(old.spec as object), resources: { requests: { storage: '1024Mi' } } },
    });
    expect(await updated(persistentVolumeClaimStrategy, shrunk, { old: expanded })).toEqual([
      'spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
    ]);
    const mode = obj({ ...old, spec: { ...(old.spec as object), volumeMode: 'Block' } });
    expect(await updated(persistentVolumeClaimStrategy, mode, { old })).toEqual([
      'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      'volumeMode: Invalid value: "Block": field is immutable',
    ]);
  });

  it('compares quantities exactly', () => {
    expect(compareQuantities('1Gi', '1024Mi')).toBe(0);
    expect(compareQuantities('1.5Gi', '1536Mi')).toBe(0);
    expect(compareQuantities('1G', '1Gi')).toBe(-1);
    expect(compareQuantities('2', '1500m')).toBe(1);
    expect(compareQuantities(undefined, '1')).toBe(-1);
  });
});

describe('IngressClass and Ingress', () => {
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const ingress = (spec: Record<string, unknown>): ApiObject => obj({ spec });

  it("IngressClass: the parameters' scope defaults to Cluster; controller and parameters validated", async () => {
    const ic = created(
      ingressClassStrategy,
      obj({ spec: { controller: 'example.com/ingress', parameters: { kind: 'Params', name: 'p' } } }),
    );
    expect(ic.spec).toEqual({
      controller: 'example.com/ingress',
      parameters: { kind: 'Params', name: 'p', scope: 'Cluster' },
    });
    expect(await messages(ingressClassStrategy.validate?.(ic, ctx))).toEqual([]);
    const bad = created(
      ingressClassStrategy,
      obj({ spec: { controller: 'nginx', parameters: { kind: '', name: 'a/b', scope: 'Namespace' } } }),
    );
    expect(await messages(ingressClassStrategy.validate?.(bad, ctx))).toEqual([
      'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
      'spec.parameters.kind: Required value: kind is required',
      `spec.parameters.name: Invalid value: "a/b": may not contain '/'`,
      "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
    ]);
    const moved = obj({ ...ic, spec: { ...(ic.spec as object), controller: 'example.com/other' } });
    expect(await updated(ingressClassStrategy, moved, { old: ic })).toEqual([
      'spec.controller: Invalid value: "example.com/other": field is immutable',
    ]);
  });

  it("Ingress: pathType required, one backend, a port by name or number, DNS hosts; Kubernetes' messages", async () => {
    const ok = created(
      ingressStrategy,
      ingress({
        rules: [{ host: '*.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }],
        tls: [{ hosts: ['a.example.com'], secretName: 'tls' }],
      }),
    );
    expect(ok.status).toEqual({});
    expect(await messages(ingressStrategy.validate?.(ok, ctx))).toEqual([]);
    expect(await messages(ingressStrategy.validate?.(ingress({}), ctx))).toEqual([
      'spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
    ]);
    const bad = ingress({
      defaultBackend: { service: { name: 'web', port: { name: 'http', number: 80 } } },
      rules: [
        {
          host: '10.0.0.1',
          http: {
            paths: [
              { path: '/a', backend },
              { path: 'b//c', pathType: 'Exact', backend: { service: { name: 'Web' } } },
              { path: '/x', pathType: 'Regex', backend: { ...backend, resource: { kind: 'Bucket', name: 'b' } } },
            ],
          },
        },
        { host: 'a.*.com', http: { paths: [] } },
      ],
      ingressClassName: 'Nginx',
    });
    expect(await messages(ingressStrategy.validate?.(bad, ctx))).toEqual([
      'spec.defaultBackend: Invalid value: "": cannot set both port name & port number',
      'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      'spec.rules[0].http.paths[1].path: Invalid value: "b//c": must be an absolute path',
      `spec.rules[0].http.paths[1].path: Invalid value: "b//c": must not contain '//'`,
      `spec.rules[0].http.paths[1].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      'spec.rules[0].http.paths[1].backend: Required value: port name or number is required',
      'spec.rules[0].http.paths[2].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
      'spec.rules[0].http.paths[2].backend: Invalid value: "": cannot set both resource and service backends',
      `spec.rules[1].host: Invalid value: "a.*.com": ${isWildcardDns1123Subdomain('a.*.com')[0] ?? ''}`,
      'spec.rules[1].http.paths: Required value',
      `spec.ingressClassName: Invalid value: "Nginx": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
    expect(isWildcardDns1123Subdomain('a.*.com')).toEqual([
      `a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });

  it('Ingress status writes are validated, and an update keeps an invalid stored TLS secret name', async () => {
    const old = created(ingressStrategy, ingress({ defaultBackend: backend, tls: [{ secretName: 'Bad_Secret' }] }));
    expect(await updated(ingressStrategy, obj({ ...old }), { old })).toEqual([]);
    const status = obj({
      ...old,
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.300' }, { hostname: '1.2.3.4' }] } },
    });
    expect(await updated(ingressStrategy, status, { old, sub: 'status' })).toEqual([
      'status.loadBalancer.ingress[0].ip: Invalid value: "10.0.0.300": must be a valid IP address',
      'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
    ]);
  });
});

describe("Protobuf: generated.proto's numbers", () => {
  const catalog = builtinCatalog();
  const schemaOf = (g: string, plural: string): ObjectSchema => catalog.lookup(g, 'v1', plural)?.schema as ObjectSchema;

  it('PersistentVolumeSpec nests its volume source at 2 (hostPath 3, csi 22), the rest at their own numbers', () => {
    const pv = {
      metadata: { name: 'v' },
      spec: {
        capacity: { storage: '1Gi' },
        hostPath: { path: '/data', type: '' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Available' },
    };
    const bytes = encodeMessage(pv, schemaOf('', 'persistentvolumes'));
    const generated = s.obj({
      spec: s.obj(
        {
          persistentVolumeSource: s.obj(
            { hostPath: s.obj({ path: s.str({ tag: 1 }), type: s.str({ tag: 2 }) }, { tag: 3 }) },
            { tag: 2 },
          ),
          accessModes: s.atomic(s.str(), { tag: 3 }),
          persistentVolumeReclaimPolicy: s.str({ tag: 5 }),
          volumeMode: s.str({ tag: 8 }),
        },
        { tag: 2 },
      ),
      status: s.obj({ phase: s.str({ tag: 1 }) }, { tag: 3 }),
    });
    expect(decodeMessage(bytes, generated)).toEqual({
      spec: {
        persistentVolumeSource: { hostPath: { path: '/data' } },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Available' },
    });
    expect(decodeMessage(bytes, schemaOf('', 'persistentvolumes'))).toMatchObject({
      spec: { hostPath: { path: '/data' } },
    });
  });

  it('IngressRule nests http at 1 of its IngressRuleValue at 2; StorageClass fields are top level', () => {
    const ing = {
      metadata: { name: 'i' },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'a.com',
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
            },
          },
        ],
      },
    };
    const generated = s.obj({
      spec: s.obj(
        {
          ingressClassName: s.str({ tag: 4 }),
          rules: s.atomic(
            s.obj({
              host: s.str({ tag: 1 }),
              ingressRuleValue: s.obj(
                {
                  http: s.obj(
                    {
                      paths: s.atomic(
                        s.obj({
                          path: s.str({ tag: 1 }),
                          pathType: s.str({ tag: 3 }),
                          backend: s.obj(
                            {
                              service: s.obj(
                                { name: s.str({ tag: 1 }), port: s.obj({ number: s.int32({ tag: 2 }) }, { tag: 2 }) },
                                { tag: 4 },
                              ),
                            },
                            { tag: 2 },
                          ),
                        }),
                        { tag: 1 },
                      ),
                    },
                    { tag: 1 },
                  ),
                },
                { tag: 2 },
              ),
            }),
            { tag: 3 },
          ),
        },
        { tag: 2 },
      ),
    });
    const bytes = encodeMessage(ing, schemaOf(group('networking'), 'ingresses'));
    expect(decodeMessage(bytes, generated)).toEqual({
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'a.com',
            ingressRuleValue: {
              http: {
                paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
              },
            },
          },
        ],
      },
    });
    const sc = {
      metadata: { name: 'fast' },
      provisioner: 'a.io/b',
      reclaimPolicy: 'Delete',
      allowVolumeExpansion: true,
      volumeBindingMode: 'Immediate',
    };
    const scBytes = encodeMessage(sc, schemaOf(group('storage'), 'storageclasses'));
    const scGenerated = s.obj({
      provisioner: s.str({ tag: 2 }),
      reclaimPolicy: s.str({ tag: 4 }),
      allowVolumeExpansion: s.bool({ tag: 6 }),
      volumeBindingMode: s.str({ tag: 7 }),
    });
    expect(decodeMessage(scBytes, scGenerated)).toEqual({
      provisioner: 'a.io/b',
      reclaimPolicy: 'Delete',
      allowVolumeExpansion: true,
      volumeBindingMode: 'Immediate',
    });
  });
});
