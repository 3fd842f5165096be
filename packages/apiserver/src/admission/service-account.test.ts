// The ServiceAccount admission plugin over in-memory accounts, under both namings.
import {
  builtinCatalog,
  isStatusError,
  useNaming,
  type ApiObject,
  type NamingScheme,
  type Pod,
  type ServiceAccount,
} from '@svc/api';
import type { AdmissionAttributes } from './admission.js';
import { ServiceAccountAdmission } from './service-account.js';

const account = (name: string, extra: Partial<ServiceAccount> = {}): ServiceAccount => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: 'ns' },
  ...extra,
});

function setup(accounts: ServiceAccount[]): { plugin: ServiceAccountAdmission; lookups: () => number } {
  let lookups = 0;
  const plugin = new ServiceAccountAdmission({
    getServiceAccount: (namespace, name) => {
      lookups++;
      return Promise.resolve(accounts.find((a) => a.metadata.namespace === namespace && a.metadata.name === name));
    },
    retryIntervalMs: () => 1,
    generateName: (prefix) => `${prefix}abcde`,
  });
  return { plugin, lookups: () => lookups };
}

function attrs(
  object: ApiObject,
  o: { operation?: 'CREATE' | 'UPDATE'; subresource?: string } = {},
): AdmissionAttributes {
  const pods = builtinCatalog().lookup('', 'v1', 'pods');
  if (!pods) throw new Error('no pods');
  return {
    operation: o.operation ?? 'CREATE',
    resource: pods,
    subresource: o.subresource ?? '',
    namespace: 'ns',
    name: object.metadata.name ?? '',
    object,
    dryRun: false,
    warnings: [],
    annotations: {},
  };
}

const pod = (spec: Partial<Pod['spec']> = {}, metadata: Pod['metadata'] = { name: 'p', namespace: 'ns' }): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata,
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});

async function admitted(plugin: ServiceAccountAdmission, p: Pod): Promise<Pod> {
  const a = attrs(p);
  await plugin.admit(a);
  await plugin.validate(a);
  return a.object as Pod;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e) && e.status.code === 403) return e.status.message ?? '';
    throw e;
  }
  throw new Error('expected a 403');
}

describe.each<{ scheme: NamingScheme; volumeName: string; mountPath: string; rootCa: string }>([
  {
    scheme: 'svc',
    volumeName: 'svc-api-access-abcde',
    mountPath: '/var/run/secrets/svc.io/serviceaccount',
    rootCa: 'svc-root-ca.crt',
  },
  {
    scheme: 'kubernetes',
    volumeName: 'kube-api-access-abcde',
    mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
    rootCa: 'kube-root-ca.crt',
  },
])('naming $scheme', ({ scheme, volumeName, mountPath, rootCa }) => {
  beforeAll(() => useNaming(scheme));
  afterAll(() => useNaming('svc'));

  it('defaults the account and mounts the projected token volume into every container', async () => {
    const { plugin } = setup([account('default')]);
    const out = await admitted(
      plugin,
      pod({ initContainers: [{ name: 'i' }], containers: [{ name: 'a' }, { name: 'b' }] }),
    );
    expect(out.spec.serviceAccountName).toBe('default');
    const mount = { name: volumeName, readOnly: true, mountPath };
    for (const c of [...out.spec.initContainers!, ...out.spec.containers]) expect(c.volumeMounts).toEqual([mount]);
    expect(out.spec.volumes).toEqual([
      {
        name: volumeName,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
            { configMap: { name: rootCa, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
        },
      },
    ]);
    expect(out.spec.imagePullSecrets).toEqual([]);
  });
});

describe('accounts', () => {
  beforeAll(() => useNaming('svc'));

  it('a named account must exist; default is looked up ten times', async () => {
    const s = setup([]);
    expect(await refusal(s.plugin.admit(attrs(pod({ serviceAccountName: 'robot' }))))).toBe(
      'pods "p" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found',
    );
    expect(s.lookups()).toBe(1);
    expect(await refusal(s.plugin.admit(attrs(pod())))).toBe(
      'pods "p" is forbidden: error looking up service account ns/default: serviceaccount "default" not found',
    );
    expect(s.lookups()).toBe(11);
  });

  it('a pod without a name yet is named by its resource only', async () => {
    const { plugin } = setup([]);
    expect(
      await refusal(plugin.admit(attrs(pod({ serviceAccountName: 'r' }, { generateName: 'p-', namespace: 'ns' })))),
    ).toBe('pods is forbidden: error looking up service account ns/r: serviceaccount "r" not found');
  });

  it('automountServiceAccountToken: the pod wins, then the account', async () => {
    const { plugin } = setup([account('off', { automountServiceAccountToken: false }), account('default')]);
    const noVolume = (p: Pod) => p.spec.volumes === undefined && p.spec.containers.every((c) => !c.volumeMounts);
    expect(noVolume(await admitted(plugin, pod({ serviceAccountName: 'off' })))).toBe(true);
    expect(noVolume(await admitted(plugin, pod({ automountServiceAccountToken: false })))).toBe(true);
    expect(
      noVolume(await admitted(plugin, pod({ serviceAccountName: 'off', automountServiceAccountToken: true }))),
    ).toBe(false);
  });

  it('keeps what the pod mounts at the path and reuses an existing token volume', async () => {
    const { plugin } = setup([account('default')]);
    const mine = { name: 'mine', mountPath: '/var/run/secrets/svc.io/serviceaccount' };
    const out = await admitted(
      plugin,
      pod({
        volumes: [
          { name: 'svc-api-access-zzzzz', emptyDir: {} },
          { name: 'mine', emptyDir: {} },
        ],
        containers: [{ name: 'a', volumeMounts: [mine] }, { name: 'b' }],
      }),
    );
    expect(out.spec.containers[0]!.volumeMounts).toEqual([mine]);
    expect(out.spec.containers[1]!.volumeMounts).toEqual([
      { name: 'svc-api-access-zzzzz', readOnly: true, mountPath: '/var/run/secrets/svc.io/serviceaccount' },
    ]);
    expect(out.spec.volumes!.map((v) => v.name)).toEqual(['svc-api-access-zzzzz', 'mine']);
  });

  it("copies the account's image pull secrets unless the pod has some", async () => {
    const { plugin } = setup([account('default', { imagePullSecrets: [{ name: 'reg' }] })]);
    expect((await admitted(plugin, pod())).spec.imagePullSecrets).toEqual([{ name: 'reg' }]);
    expect((await admitted(plugin, pod({ imagePullSecrets: [{ name: 'own' }] }))).spec.imagePullSecrets).toEqual([
      { name: 'own' },
    ]);
  });

  it('only pod creation is changed; updates and other subresources are left alone', async () => {
    const { plugin } = setup([]);
    const update = attrs(pod(), { operation: 'UPDATE' });
    await plugin.admit(update);
    await plugin.validate(update);
    const status = attrs(pod(), { operation: 'UPDATE', subresource: 'status' });
    await plugin.admit(status);
    expect((update.object as Pod).spec.serviceAccountName).toBeUndefined();
  });

  it('an account annotated enforce-mountable-secrets limits the secrets a pod uses', async () => {
    const { plugin } = setup([
      account('strict', {
        metadata: { name: 'strict', namespace: 'ns', annotations: { 'svc.io/enforce-mountable-secrets': 'true' } },
        secrets: [{ name: 'ok' }],
      }),
    ]);
    await admitted(
      plugin,
      pod({ serviceAccountName: 'strict', volumes: [{ name: 'v', secret: { secretName: 'ok' } }] }),
    );
    expect(
      await refusal(
        admitted(plugin, pod({ serviceAccountName: 'strict', volumes: [{ name: 'v', secret: { secretName: 'no' } }] })),
      ),
    ).toBe(
      'pods "p" is forbidden: volume with secret.secretName="no" is not allowed because service account strict does not reference that secret',
    );
    const env = { name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'no', key: 'k' } } }] };
    expect(await refusal(admitted(plugin, pod({ serviceAccountName: 'strict', containers: [env] })))).toBe(
      'pods "p" is forbidden: container c with envVar E referencing secret.secretName="no" is not allowed because service account strict does not reference that secret',
    );
    const debug = attrs(
      pod({
        serviceAccountName: 'strict',
        ephemeralContainers: [{ name: 'd', envFrom: [{ secretRef: { name: 'no' } }] }],
      }),
      {
        operation: 'UPDATE',
        subresource: 'ephemeralcontainers',
      },
    );
    expect(await refusal(plugin.validate(debug))).toBe(
      'pods "p" is forbidden: ephemeral container d with envFrom referencing secret.secretName="no" is not allowed because service account strict does not reference that secret',
    );
  });
});

describe('mirror pods', () => {
  beforeAll(() => useNaming('svc'));
  const mirror = (spec: Partial<Pod['spec']> = {}) =>
    pod(spec, { name: 'm', namespace: 'ns', annotations: { 'svc.io/config.mirror': 'hash' } });

  it('are not given an account or a token, and may not reference accounts, secrets or token projections', async () => {
    const { plugin, lookups } = setup([account('default')]);
    const out = await admitted(plugin, mirror());
    expect(out.spec.serviceAccountName).toBeUndefined();
    expect(out.spec.volumes).toBeUndefined();
    expect(lookups()).toBe(0);
    expect(await refusal(admitted(plugin, mirror({ serviceAccountName: 'default' })))).toBe(
      'pods "m" is forbidden: a mirror pod may not reference service accounts',
    );
    expect(await refusal(admitted(plugin, mirror({ volumes: [{ name: 's', secret: { secretName: 'x' } }] })))).toBe(
      'pods "m" is forbidden: a mirror pod may not reference secrets',
    );
    expect(
      await refusal(
        admitted(
          plugin,
          mirror({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }] }),
        ),
      ),
    ).toBe('pods "m" is forbidden: a mirror pod may not use ServiceAccountToken volume projections');
  });
});
