// StorageClass, PersistentVolume, PersistentVolumeClaim, IngressClass and Ingress on a real
// server (etcd, HTTPS) with stock kubectl, and the admission plugins that govern them:
// DefaultStorageClass (the newest default class), StorageObjectInUseProtection (the protection
// finalizers), PersistentVolumeClaimResize (Kubernetes' 403s) and DefaultIngressClass; Kubernetes'
// Table columns and 422 messages. The Ingress part runs under --naming=kubernetes, where kubectl's
// `create ingress` generator names Kubernetes' group.
import { setTimeout as delay } from 'node:timers/promises';
import type { Ingress, PersistentVolume, PersistentVolumeClaim, StorageClass } from '@svc/api';
import { createNamespace, startKubectlEnv, uniqueName, type KubectlEnv } from '@svc/testing';

let env: KubectlEnv;

/** Rows of a kubectl table: the header, then one array of cells per line. */
function table(stdout: string): string[][] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}

async function apply(obj: object, ns?: string): Promise<void> {
  await env.ok(['apply', '-f', await env.manifest(obj), ...(ns ? ['-n', ns] : [])]);
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await env.ok(['get', ...args, '-o', 'json'])).stdout) as T;
}

const claim = (name: string, spec: object = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

describe('storage under the default naming', () => {
  beforeAll(async () => {
    env = await startKubectlEnv();
  });
  afterAll(async () => {
    await env.stop();
  });

  it('StorageClass: v1 defaults, the newest default class, Table columns, immutable fields', async () => {
    await apply({
      apiVersion: 'storage.svc.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'aa-older', annotations: { 'storageclass.svc.io/is-default-class': 'true' } },
      provisioner: 'example.com/disk',
      parameters: { type: 'ssd' },
    });
    const older = await getJson<StorageClass>(['storageclass', 'aa-older']);
    expect(older).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    await delay(1100); // creation timestamps have whole seconds
    await apply({
      apiVersion: 'storage.svc.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'zz-newer', annotations: { 'storageclass.svc.io/is-default-class': 'true' } },
      provisioner: 'example.com/disk',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    });
    const rows = table((await env.ok(['get', 'sc'])).stdout);
    expect(rows[0]).toEqual([
      'NAME',
      'PROVISIONER',
      'RECLAIMPOLICY',
      'VOLUMEBINDINGMODE',
      'ALLOWVOLUMEEXPANSION',
      'AGE',
    ]);
    expect(rows.slice(1).map((r) => r.slice(0, 5))).toEqual([
      ['aa-older (default)', 'example.com/disk', 'Delete', 'Immediate', 'false'],
      ['zz-newer (default)', 'example.com/disk', 'Retain', 'WaitForFirstConsumer', 'true'],
    ]);

    const ns = await createNamespace(env.server.client, 'sc');
    await apply(claim('defaulted'), ns);
    await apply(claim('no-class', { storageClassName: '' }), ns);
    await apply(claim('named', { storageClassName: 'aa-older' }), ns);
    const classes = await Promise.all(
      ['defaulted', 'no-class', 'named'].map(
        async (n) => (await getJson<PersistentVolumeClaim>(['pvc', n, '-n', ns])).spec?.storageClassName,
      ),
    );
    // Several defaults: the newest wins (Kubernetes 1.32), not the first by name.
    expect(classes).toEqual(['zz-newer', '', 'aa-older']);

    const r = await env.run([
      'patch',
      'sc',
      'aa-older',
      '-p',
      '{"parameters":{"type":"hdd"},"reclaimPolicy":"Retain"}',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      'The StorageClass "aa-older" is invalid: \n' +
        '* parameters: Forbidden: updates to parameters are forbidden.\n' +
        '* reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
    );
    await env.ok(['patch', 'sc', 'aa-older', '-p', '{"allowVolumeExpansion":true}']);
    await env.ok(['delete', 'sc', 'zz-newer']);
  });

  it('PersistentVolume: defaults, the pv-protection finalizer, columns, validation', async () => {
    const name = uniqueName('pv');
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
        storageClassName: 'manual',
        hostPath: { path: '/srv/data' },
      },
    });
    const pv = await getJson<PersistentVolume>(['pv', name]);
    expect(pv.metadata.finalizers).toEqual(['svc.io/pv-protection']);
    expect(pv.spec).toMatchObject({
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
      hostPath: { path: '/srv/data', type: '' },
    });
    expect(pv.status?.phase).toBe('Pending');
    expect(pv.status?.lastPhaseTransitionTime).toEqual(expect.any(String));
    expect(pv.metadata.generation).toBeUndefined();

    await env.ok([
      'patch',
      'pv',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Available"}}',
    ]);
    const rows = table((await env.ok(['get', 'pv', name, '-o', 'wide'])).stdout);
    expect(rows[0]).toEqual([
      'NAME',
      'CAPACITY',
      'ACCESS MODES',
      'RECLAIM POLICY',
      'STATUS',
      'CLAIM',
      'STORAGECLASS',
      'VOLUMEATTRIBUTESCLASS',
      'REASON',
      'AGE',
      'VOLUMEMODE',
    ]);
    // Empty cells (claim, reason) collapse in the split; the named ones are what matters.
    expect(rows[1]?.slice(0, 6)).toEqual([name, '5Gi', 'RWO,ROX', 'Retain', 'Available', 'manual']);
    expect(rows[1]?.[6]).toBe('<unset>');
    expect(rows[1]?.[8]).toBe('Filesystem');

    const local = await env.run([
      'create',
      '-f',
      await env.manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'local-pv' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], local: { path: '/mnt/disks/../x' } },
      }),
    ]);
    expect(local.stderr.trim()).toBe(
      'The PersistentVolume "local-pv" is invalid: \n' +
        '* spec.local.path: Invalid value: "/mnt/disks/../x": must not contain \'..\'\n' +
        '* spec.nodeAffinity: Required value: Local volume requires node affinity',
    );
    const moved = await env.run(['patch', 'pv', name, '-p', '{"spec":{"hostPath":{"path":"/elsewhere"}}}']);
    expect(moved.stderr).toContain(
      'spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation',
    );
  });

  it('PersistentVolumeClaim: defaults, pvc-protection, validation, Terminating until the finalizer goes', async () => {
    const ns = await createNamespace(env.server.client, 'pvc');
    await apply(claim('data', { storageClassName: 'aa-older' }), ns);
    const pvc = await getJson<PersistentVolumeClaim>(['pvc', 'data', '-n', ns]);
    expect(pvc.metadata.finalizers).toEqual(['svc.io/pvc-protection']);
    expect(pvc.spec?.volumeMode).toBe('Filesystem');
    expect(pvc.status).toEqual({ phase: 'Pending' });

    const bad = await env.run([
      'create',
      '-n',
      ns,
      '-f',
      await env.manifest({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'bad' }, spec: {} }),
    ]);
    expect(bad.stderr.trim()).toBe(
      'The PersistentVolumeClaim "bad" is invalid: \n' +
        '* spec.accessModes: Required value: at least 1 access mode is required\n' +
        '* spec.resources[storage]: Required value',
    );

    let rows = table((await env.ok(['get', 'pvc', '-n', ns])).stdout);
    expect(rows[0]).toEqual([
      'NAME',
      'STATUS',
      'VOLUME',
      'CAPACITY',
      'ACCESS MODES',
      'STORAGECLASS',
      'VOLUMEATTRIBUTESCLASS',
      'AGE',
    ]);
    expect(rows[1]?.slice(0, 4)).toEqual(['data', 'Pending', 'aa-older', '<unset>']);

    await env.ok(['delete', 'pvc', 'data', '-n', ns, '--wait=false']);
    rows = table((await env.ok(['get', 'pvc', '-n', ns])).stdout);
    expect(rows[1]?.slice(0, 2)).toEqual(['data', 'Terminating']);
    await env.ok([
      'patch',
      'pvc',
      'data',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    expect((await env.run(['get', 'pvc', 'data', '-n', ns])).code).not.toBe(0);
  });

  it('PersistentVolumeClaimResize: only bound claims of an expandable class grow; never below status.capacity', async () => {
    const ns = await createNamespace(env.server.client, 'resize');
    await apply({
      apiVersion: 'storage.svc.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fixed' },
      provisioner: 'example.com/disk',
    });
    await apply(claim('grow', { storageClassName: 'aa-older' }), ns);
    await apply(claim('stuck', { storageClassName: 'fixed' }), ns);
    const grow = (n: string, size: string) =>
      env.run([
        'patch',
        'pvc',
        n,
        '-n',
        ns,
        '-p',
        JSON.stringify({ spec: { resources: { requests: { storage: size } } } }),
      ]);

    // Unbound: the spec is immutable (validation answers before admission, as in Kubernetes).
    const pending = await grow('grow', '2Gi');
    expect(pending.stderr.trim()).toBe(
      'The PersistentVolumeClaim "grow" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
    );

    for (const n of ['grow', 'stuck']) {
      await env.ok(['patch', 'pvc', n, '-n', ns, '-p', `{"spec":{"volumeName":"pv-${n}"}}`]);
      await env.ok([
        'patch',
        'pvc',
        n,
        '-n',
        ns,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Bound","capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"]}}',
      ]);
    }
    const stuck = await grow('stuck', '2Gi');
    expect(stuck.stderr.trim()).toBe(
      'Error from server (Forbidden): persistentvolumeclaims "stuck" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
    await grow('grow', '3Gi').then((r) => expect(r.code).toBe(0));
    // Back down after a failed expansion is allowed above the capacity, refused at or below it.
    await grow('grow', '2Gi').then((r) => expect(r.code).toBe(0));
    const shrink = await grow('grow', '1Gi');
    expect(shrink.stderr.trim()).toBe(
      'The PersistentVolumeClaim "grow" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
    );

    const rows = table((await env.ok(['get', 'pvc', 'grow', '-n', ns, '-o', 'wide'])).stdout);
    expect(rows[1]?.slice(0, 6)).toEqual(['grow', 'Bound', 'pv-grow', '1Gi', 'RWO', 'aa-older']);
    expect(rows[1]?.[8]).toBe('Filesystem');
  });
});

describe('networking and storage under --naming=kubernetes', () => {
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  const ingressClass = (name: string, isDefault: boolean) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: {
      name,
      annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {},
    },
    spec: { controller: 'example.com/ingress-controller', parameters: { kind: 'Params', name: name } },
  });

  it('kubectl create ingress: the newest default IngressClass, pathType from the rule, Table columns', async () => {
    await apply(ingressClass('aa-older', true));
    await delay(1100);
    await apply(ingressClass('zz-newer', true));
    await apply(ingressClass('other', false));
    let rows = table((await env.ok(['get', 'ingressclass'])).stdout);
    expect(rows[0]).toEqual(['NAME', 'CONTROLLER', 'PARAMETERS', 'AGE']);
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
      ['aa-older', 'example.com/ingress-controller', 'Params/aa-older'],
      ['other', 'example.com/ingress-controller', 'Params/other'],
      ['zz-newer', 'example.com/ingress-controller', 'Params/zz-newer'],
    ]);

    const ns = await createNamespace(env.server.client, 'ing');
    await env.ok(['create', 'ingress', 'simple', '-n', ns, '--rule=foo.com/bar=svc1:8080']);
    await env.ok([
      'create',
      'ingress',
      'tls',
      '-n',
      ns,
      '--class=other',
      '--rule=a.example.com/*=web:http,tls=web-cert',
      '--rule=b.example.com/=web:80',
      '--default-backend=fallback:80',
    ]);
    const simple = await getJson<Ingress>(['ingress', 'simple', '-n', ns]);
    expect(simple.spec).toEqual({
      ingressClassName: 'zz-newer',
      rules: [
        {
          host: 'foo.com',
          http: {
            paths: [
              { path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } },
            ],
          },
        },
      ],
    });
    expect(simple.metadata.generation).toBe(1);
    const tls = await getJson<Ingress>(['ingress', 'tls', '-n', ns]);
    expect(tls.spec?.ingressClassName).toBe('other');
    expect(tls.spec?.rules?.[0]?.http?.paths[0]).toEqual({
      path: '/',
      pathType: 'Prefix',
      backend: { service: { name: 'web', port: { name: 'http' } } },
    });

    await env.ok([
      'patch',
      'ingress',
      'tls',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"},{"hostname":"lb.example.com"}]}}}',
    ]);
    rows = table((await env.ok(['get', 'ingress', '-n', ns])).stdout);
    expect(rows[0]).toEqual(['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE']);
    // No address yet: the empty cell collapses in the split.
    expect(rows[1]?.slice(0, 4)).toEqual(['simple', 'zz-newer', 'foo.com', '80']);
    // Each load balancer entry shows its IP, else its hostname.
    expect(rows[2]?.slice(0, 5)).toEqual([
      'tls',
      'other',
      'a.example.com,b.example.com',
      '192.0.2.10,lb.example.com',
      '80, 443',
    ]);
  });

  it("Ingress validation: Kubernetes' 422 messages", async () => {
    const ns = await createNamespace(env.server.client, 'ing-bad');
    const r = await env.run([
      'create',
      '-n',
      ns,
      '-f',
      await env.manifest({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'bad' },
        spec: {
          rules: [
            {
              host: '10.1.2.3',
              http: {
                paths: [
                  { path: '/', backend: { service: { name: 'web', port: { number: 80 } } } },
                  {
                    path: '/x',
                    pathType: 'Prefix',
                    backend: { service: { name: 'web', port: { name: 'http', number: 80 } } },
                  },
                ],
              },
            },
          ],
        },
      }),
    ]);
    expect(r.stderr.trim()).toBe(
      'The Ingress "bad" is invalid: \n' +
        '* spec.rules[0].host: Invalid value: "10.1.2.3": must be a DNS name, not an IP address\n' +
        '* spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified\n' +
        '* spec.rules[0].http.paths[1].backend: Invalid value: "": cannot set both port name & port number',
    );
    const empty = await env.run([
      'create',
      '-n',
      ns,
      '-f',
      await env.manifest({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'empty' },
        spec: {},
      }),
    ]);
    expect(empty.stderr.trim()).toBe(
      'The Ingress "empty" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
    );
  });

  it("kubectl get pvc,pv,sc,ingress,ingressclass with Kubernetes' annotations and finalizers", async () => {
    const ns = await createNamespace(env.server.client, 'all');
    await apply({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/disk',
    });
    await env.ok(['get', 'sc']); // a consistent list: the watch cache has the class before the claim is created
    await apply(claim('data'), ns);
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: uniqueName('nfs') },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteMany'],
        nfs: { server: 'nfs.example.com', path: '/exports' },
      },
    });
    const pvc = await getJson<PersistentVolumeClaim>(['pvc', 'data', '-n', ns]);
    expect(pvc.spec?.storageClassName).toBe('standard');
    expect(pvc.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    const out = (await env.ok(['get', 'pvc,pv,sc,ingress,ingressclass', '-n', ns])).stdout;
    expect(out).toContain('persistentvolumeclaim/data');
    expect(out).toContain('storageclass.storage.k8s.io/standard (default)');
    expect(out).toContain('ingressclass.networking.k8s.io/zz-newer');
    expect(out).toMatch(/persistentvolume\/nfs-\S+\s+1Gi\s+RWX\s+Retain\s+Pending/);
  });
});
