// The ServiceAccount admission plugin on a real server (etcd, HTTPS) with stock kubectl: the
// default account, the projected token volume mounted into every container, automount false,
// a missing account (Kubernetes' error text), the account created while the pod waits for it,
// image pull secrets and mirror pods; then Kubernetes' spelling under --naming=kubernetes.
import { setTimeout as delay } from 'node:timers/promises';
import type { Pod } from '@svc/api';
import { createNamespace, startKubectlEnv, uniqueName, type KubectlEnv, type HttpResponse } from '@svc/testing';

let env: KubectlEnv;

async function namespaceWithAccount(): Promise<string> {
  const ns = await createNamespace(env.server.client, 'sa');
  const r = await env.server.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } });
  expect(r.status).toBe(201);
  return ns;
}

function createPod(ns: string, spec: object, metadata: object = {}): Promise<HttpResponse> {
  return env.server.client.post(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: uniqueName('p'), ...metadata },
    spec,
  });
}

const tokenVolume = (rootCa: string) => ({
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
});

describe('the default naming', () => {
  beforeAll(async () => {
    env = await startKubectlEnv();
  });
  afterAll(async () => {
    await env.stop();
  });

  it('kubectl run: the default account and the token volume, mounted read-only into every container', async () => {
    const ns = await namespaceWithAccount();
    await env.ok(['run', 'web', '--image=busybox', '-n', ns]);
    const pod = JSON.parse((await env.ok(['get', 'pod', 'web', '-n', ns, '-o', 'json'])).stdout) as Pod;
    expect(pod.spec.serviceAccountName).toBe('default');
    const volume = pod.spec.volumes?.[0];
    expect(volume?.name).toMatch(/^svc-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume).toEqual({ name: volume?.name, ...tokenVolume('svc-root-ca.crt') });
    expect(pod.spec.containers[0]?.volumeMounts).toEqual([
      { name: volume?.name, readOnly: true, mountPath: '/var/run/secrets/svc.io/serviceaccount' },
    ]);

    const r = await createPod(ns, {
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [
        { name: 'a', image: 'busybox' },
        { name: 'b', image: 'busybox' },
      ],
    });
    const p = r.json<Pod>();
    const name = p.spec.volumes?.[0]?.name;
    for (const c of [...(p.spec.initContainers ?? []), ...p.spec.containers]) {
      expect(c.volumeMounts).toEqual([{ name, readOnly: true, mountPath: '/var/run/secrets/svc.io/serviceaccount' }]);
    }
  });

  it('automountServiceAccountToken false, on the pod or the account, mounts nothing', async () => {
    const ns = await namespaceWithAccount();
    const c = env.server.client;
    await c.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {
      metadata: { name: 'quiet' },
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: 'registry' }],
    });
    const onPod = (
      await createPod(ns, { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'x' }] })
    ).json<Pod>();
    expect(onPod.spec.volumes).toBeUndefined();
    expect(onPod.spec.containers[0]?.volumeMounts).toBeUndefined();
    const onAccount = (
      await createPod(ns, { serviceAccountName: 'quiet', containers: [{ name: 'c', image: 'x' }] })
    ).json<Pod>();
    expect(onAccount.spec.volumes).toBeUndefined();
    // The account's image pull secrets are copied to a pod that has none.
    expect(onAccount.spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
  });

  it('a missing account is refused with Kubernetes message', async () => {
    const ns = await namespaceWithAccount();
    const r = await env.run([
      'run',
      'robot',
      '--image=busybox',
      '--overrides={"spec":{"serviceAccountName":"robot"}}',
      '-n',
      ns,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): pods "robot" is forbidden: error looking up service account ${ns}/robot: serviceaccount "robot" not found`,
    );
    const bare = await createNamespace(env.server.client, 'sa-none');
    const started = Date.now();
    const none = await createPod(bare, { containers: [{ name: 'c', image: 'x' }] }, { name: 'p' });
    expect(none.status).toBe(403);
    expect(none.json().message).toBe(
      `pods "p" is forbidden: error looking up service account ${bare}/default: serviceaccount "default" not found`,
    );
    // The default account is looked up again for a while (the controller manager creates it).
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a pod waits briefly for the default account the controller manager is about to create', async () => {
    const ns = await createNamespace(env.server.client, 'sa-late');
    const pod = createPod(ns, { containers: [{ name: 'c', image: 'x' }] });
    await delay(300);
    await env.server.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } });
    expect((await pod).status).toBe(201);
  });

  it('mirror pods get no account and may not name one', async () => {
    const ns = await namespaceWithAccount();
    const mirror = { annotations: { 'svc.io/config.mirror': 'hash' } };
    const ok = await createPod(ns, { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] }, mirror);
    expect(ok.status).toBe(201);
    expect(ok.json<Pod>().spec.volumes).toBeUndefined();
    expect(ok.json<Pod>().spec.serviceAccountName).toBeUndefined();
    const named = await createPod(
      ns,
      { serviceAccountName: 'default', nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
      { ...mirror, name: 'm' },
    );
    expect(named.status).toBe(403);
    expect(named.json().message).toBe('pods "m" is forbidden: a mirror pod may not reference service accounts');
  });

  it('a dry run shows the same defaults and stores nothing', async () => {
    const ns = await namespaceWithAccount();
    const r = await env.server.client.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, {
      metadata: { name: 'dry' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    expect(r.status).toBe(201);
    expect(r.json<Pod>().spec.volumes?.[0]?.name).toMatch(/^svc-api-access-/);
    expect((await env.server.client.get(`/api/v1/namespaces/${ns}/pods/dry`)).status).toBe(404);
  });
});

describe('--naming=kubernetes', () => {
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  it("mounts kube-api-access-xxxxx at Kubernetes' path", async () => {
    const ns = await namespaceWithAccount();
    await env.ok(['run', 'web', '--image=busybox', '-n', ns]);
    const pod = JSON.parse((await env.ok(['get', 'pod', 'web', '-n', ns, '-o', 'json'])).stdout) as Pod;
    const volume = pod.spec.volumes?.[0];
    expect(volume?.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume).toEqual({ name: volume?.name, ...tokenVolume('kube-root-ca.crt') });
    expect(pod.spec.containers[0]?.volumeMounts).toEqual([
      { name: volume?.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
  });
});
