// ResourceQuota end to end: the resourcequota controller fills status.hard/used and keeps used
// in step with deletes and with count/<resource>.<group> kinds; the ResourceQuota admission
// plugin charges every create at once (concurrent creates cannot overshoot) and refuses with
// Kubernetes' 403s; stock kubectl creates, lists and describes quotas.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceQuota } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { createDefaultServiceAccount, createNamespace, kubectl, uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=resourcequota', '--resource-quota-sync-period=2s']);
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'svc-quota-kubectl-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const run = (args: string[]) => kubectl(env.server.svcconfigPath, args, { timeoutMs: 60_000, home });
async function ok(args: string[]): Promise<string> {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function namespace(): Promise<string> {
  const ns = await createNamespace(env.api, 'quota');
  await createDefaultServiceAccount(env.api, ns);
  return ns;
}

const quotas = (ns: string) => new ResourceClient<ResourceQuota>(env.api, R.resourceQuotas()).namespace(ns);

/** The quota once the controller has counted `resource` as `used`. */
function quotaUsing(ns: string, name: string, used: Record<string, string>): Promise<ResourceQuota> {
  return waitFor(`quota ${name} using ${JSON.stringify(used)}`, async () => {
    const q = await quotas(ns).get(name);
    return Object.entries(used).every(([k, v]) => q.status?.used?.[k] === v) ? q : undefined;
  });
}

function pod(name: string, resources?: object): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox', resources }] },
  };
}

async function createPod(ns: string, body: object): Promise<{ status: number; message?: string }> {
  const r = await env.api.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: JSON.stringify(body) });
  return { status: r.status, message: r.status === 201 ? undefined : r.json<{ message: string }>().message };
}

describe('resourcequota-controller and ResourceQuota admission', () => {
  it('kubectl create quota; the controller fills status; pods are charged and refused past the limit', async () => {
    const ns = await namespace();
    await ok(['create', 'quota', 'compute', '-n', ns, '--hard=pods=2,requests.cpu=1,limits.memory=1Gi']);
    const q = await quotaUsing(ns, 'compute', { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' });
    expect(q.status?.hard).toEqual({ pods: '2', 'requests.cpu': '1', 'limits.memory': '1Gi' });

    const missing = await createPod(ns, pod('bare'));
    expect(missing).toEqual({
      status: 403,
      message:
        'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c',
    });
    const small = { requests: { cpu: '400m' }, limits: { memory: '256Mi' } };
    expect((await createPod(ns, pod('a', small))).status).toBe(201);
    // Charged by admission at once, before the controller looks.
    expect((await quotas(ns).get('compute')).status?.used).toEqual({
      pods: '1',
      'requests.cpu': '400m',
      'limits.memory': '256Mi',
    });
    const big = await createPod(ns, pod('b', { requests: { cpu: '700m' }, limits: { memory: '256Mi' } }));
    expect(big).toEqual({
      status: 403,
      message:
        'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1',
    });
    expect((await createPod(ns, pod('c', small))).status).toBe(201);
    const third = await run([
      'run',
      'd',
      '-n',
      ns,
      '--image=busybox',
      '--overrides',
      JSON.stringify({
        apiVersion: 'v1',
        spec: {
          automountServiceAccountToken: false,
          containers: [
            { name: 'd', image: 'busybox', resources: { requests: { cpu: '100m' }, limits: { memory: '256Mi' } } },
          ],
        },
      }),
    ]);
    expect(third.stderr).toContain(
      'Error from server (Forbidden): pods "d" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
    );

    // A delete gives the quota back (the controller recounts).
    await env.api.request('DELETE', `/api/v1/namespaces/${ns}/pods/a?gracePeriodSeconds=0`);
    await quotaUsing(ns, 'compute', { pods: '1', 'requests.cpu': '400m', 'limits.memory': '256Mi' });

    const table = await ok(['get', 'quota', '-n', ns]);
    expect(table).toMatch(/^NAME\s+AGE\s+REQUEST\s+LIMIT\n/);
    expect(table).toMatch(/\ncompute\s+\S+\s+pods: 1\/2, requests\.cpu: 400m\/1\s+limits\.memory: 256Mi\/1Gi\n/);
    const described = await ok(['describe', 'quota', 'compute', '-n', ns]);
    expect(described).toMatch(/Resource\s+Used\s+Hard\n/);
    expect(described).toMatch(/limits\.memory\s+256Mi\s+1Gi\n/);
    expect(described).toMatch(/pods\s+1\s+2\n/);
    expect(described).toMatch(/requests\.cpu\s+400m\s+1\n/);
  });

  it('concurrent creates cannot overshoot a quota', async () => {
    const ns = await namespace();
    await ok(['create', 'quota', 'few', '-n', ns, '--hard=configmaps=3']);
    await quotaUsing(ns, 'few', { configmaps: '0' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        env.api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } }),
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    const refused = results.filter((r) => r.status === 403);
    expect(refused).toHaveLength(5);
    expect(refused[0]?.json<{ message: string }>().message).toMatch(
      /^configmaps "cm-\d" is forbidden: exceeded quota: few, requested: configmaps=1, used: configmaps=3, limited: configmaps=3$/,
    );
    expect((await quotas(ns).get('few')).status?.used).toEqual({ configmaps: '3' });
  });

  it('counts any kind by count/<resource>.<group>, and only pods in its scopes', async () => {
    const ns = await namespace();
    await ok(['create', 'quota', 'objects', '-n', ns, '--hard=count/deployments.apps=1,count/secrets=5']);
    await ok(['create', 'quota', 'best-effort', '-n', ns, '--hard=pods=1', '--scopes=BestEffort']);
    await quotaUsing(ns, 'objects', { 'count/deployments.apps': '0', 'count/secrets': '0' });
    await quotaUsing(ns, 'best-effort', { pods: '0' });
    await ok(['create', 'deployment', 'web', '-n', ns, '--image=busybox']);
    const second = await run(['create', 'deployment', 'api', '-n', ns, '--image=busybox']);
    expect(second.stderr).toContain(
      'deployments.apps "api" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1',
    );
    expect((await createPod(ns, pod('burstable', { requests: { cpu: '10m' } }))).status).toBe(201);
    expect((await createPod(ns, pod('be-1'))).status).toBe(201);
    const be2 = await createPod(ns, pod('be-2'));
    expect(be2.message).toBe(
      'pods "be-2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1',
    );
    await ok(['delete', 'deployment', 'web', '-n', ns]);
    await quotaUsing(ns, 'objects', { 'count/deployments.apps': '0' });
  });

  it('charges claims by storage request and count', async () => {
    const ns = await namespace();
    await ok(['create', 'quota', 'storage', '-n', ns, '--hard=requests.storage=2Gi,persistentvolumeclaims=2']);
    await quotaUsing(ns, 'storage', { 'requests.storage': '0', persistentvolumeclaims: '0' });
    const claim = (name: string, storage: string) =>
      env.api.request('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
        }),
      });
    expect((await claim('one', '1Gi')).status).toBe(201);
    const two = await claim('two', '1536Mi');
    expect(two.status).toBe(403);
    expect(two.json<{ message: string }>().message).toBe(
      'persistentvolumeclaims "two" is forbidden: exceeded quota: storage, requested: requests.storage=1536Mi, used: requests.storage=1Gi, limited: requests.storage=2Gi',
    );
    // The controller counts them too (claims are watched from the first quota that names them).
    await quotas(ns).update(
      {
        ...(await quotas(ns).get('storage')),
        status: {
          hard: { 'requests.storage': '2Gi', persistentvolumeclaims: '2' },
          used: { 'requests.storage': '0', persistentvolumeclaims: '0' },
        },
      },
      { subresource: 'status' },
    );
    await quotaUsing(ns, 'storage', { 'requests.storage': '1Gi', persistentvolumeclaims: '1' });
  });

  it('recounts what admission did not see, at the sync period', async () => {
    const ns = await namespace();
    for (const name of ['x', 'y']) {
      await env.api.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name } }),
      });
    }
    await ok(['create', 'quota', uniqueName('late'), '-n', ns, '--hard=secrets=10']);
    const q = await waitFor('the secrets counted', async () => {
      const [found] = (await quotas(ns).list()).items;
      return found?.status?.used?.secrets === '2' ? found : undefined;
    });
    // Tamper with the usage; the resync puts it back.
    await quotas(ns).update({ ...q, status: { ...q.status, used: { secrets: '7' } } }, { subresource: 'status' });
    await quotaUsing(ns, q.metadata.name ?? '', { secrets: '2' });
  });
});
