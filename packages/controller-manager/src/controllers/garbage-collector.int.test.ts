import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiObject, OwnerReference } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { createNamespace, kubectl, uniqueName, waitFor } from '@svc/testing';
import { refTo, withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=garbagecollector']);

const cm = (name: string, owners: OwnerReference[] = [], extra: Partial<ApiObject['metadata']> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ownerReferences: owners, ...extra },
  data: { k: name },
});

describe('garbage-collector-controller', () => {
  const configMaps = (ns: string) => new ResourceClient(env.api, R.configMaps()).namespace(ns);
  const gone = async (client: ResourceClient, name: string): Promise<boolean> => {
    try {
      await client.get(name);
      return false;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return true;
      throw e;
    }
  };
  const namespace = (): Promise<string> => createNamespace(env.api, 'gc');

  it('deletes the dependents of a deleted ConfigMap or Secret in the background', async () => {
    const ns = await namespace();
    const owner = await configMaps(ns).create(cm('owner'));
    const secret = await new ResourceClient(env.api, R.secrets())
      .namespace(ns)
      .create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'owner-secret' }, data: {} });
    await configMaps(ns).create(cm('dep-1', [refTo(owner)]));
    await configMaps(ns).create(cm('dep-2', [refTo(owner, true)]));
    await configMaps(ns).create(cm('dep-of-secret', [refTo(secret)]));
    await configMaps(ns).create(cm('bystander'));
    await configMaps(ns).delete('owner');
    await new ResourceClient(env.api, R.secrets()).namespace(ns).delete('owner-secret');
    for (const n of ['dep-1', 'dep-2', 'dep-of-secret'])
      await waitFor(`${n} to be collected`, () => gone(configMaps(ns), n), { timeoutMs: 15_000 });
    expect(await gone(configMaps(ns), 'bystander')).toBe(false);
  });

  it('counts an owner that exists with another uid as gone, and keeps a dependent that still has a live owner', async () => {
    const ns = await namespace();
    const owner = await configMaps(ns).create(cm('owner'));
    const stale = { ...refTo(owner), uid: '00000000-0000-4000-8000-000000000000' };
    await configMaps(ns).create(cm('stale-dep', [stale]));
    await configMaps(ns).create(cm('mixed-dep', [stale, refTo(owner)]));
    await waitFor('the dependent of a replaced owner to be collected', () => gone(configMaps(ns), 'stale-dep'), {
      timeoutMs: 15_000,
    });
    const mixed = await waitFor(
      'the stale reference to be removed',
      async () => {
        const o = await configMaps(ns).get('mixed-dep');
        return o.metadata.ownerReferences?.length === 1 ? o : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(mixed.metadata.ownerReferences).toEqual([refTo(owner)]);
    expect(await gone(configMaps(ns), 'owner')).toBe(false);
  });

  it('Foreground: the owner waits with its finalizer until its blocking dependents are gone', async () => {
    const ns = await namespace();
    const owner = await configMaps(ns).create(cm('owner'));
    // A finalizer of our own keeps the blocking dependent around, being deleted, until we remove it.
    await configMaps(ns).create(cm('blocker', [refTo(owner, true)], { finalizers: ['example.com/hold'] }));
    await configMaps(ns).create(cm('free', [refTo(owner, false)]));
    const answer = (await configMaps(ns).delete('owner', { propagationPolicy: 'Foreground' })) as ApiObject;
    expect(answer.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(answer.metadata.deletionTimestamp).toBeDefined();

    await waitFor(
      'the blocking dependent to be deleted',
      async () => (await configMaps(ns).get('blocker')).metadata.deletionTimestamp,
      { timeoutMs: 15_000 },
    );
    await waitFor('the non-blocking dependent to be collected', () => gone(configMaps(ns), 'free'), {
      timeoutMs: 15_000,
    });
    const waiting = await configMaps(ns).get('owner');
    expect(waiting.metadata.finalizers).toEqual(['foregroundDeletion']);

    await configMaps(ns).patch('blocker', { metadata: { finalizers: null } }, { type: 'merge' });
    await waitFor('the owner to disappear once nothing blocks it', () => gone(configMaps(ns), 'owner'), {
      timeoutMs: 15_000,
    });
  });

  it('Foreground on an object with a generation bumps it when deletion starts (as Kubernetes)', async () => {
    const ns = await namespace();
    const leases = new ResourceClient(env.api, R.leases()).namespace(ns);
    const lease = await leases.create({
      apiVersion: `${R.leases().group}/v1`,
      kind: 'Lease',
      metadata: { name: 'owner' },
      spec: {},
    });
    expect(lease.metadata.generation).toBe(1);
    await configMaps(ns).create(cm('dep', [refTo(lease, true)]));
    const answer = (await leases.delete('owner', { propagationPolicy: 'Foreground' })) as ApiObject;
    expect(answer.metadata).toMatchObject({ generation: 2, finalizers: ['foregroundDeletion'] });
    await waitFor('the dependent to be collected', () => gone(configMaps(ns), 'dep'), { timeoutMs: 15_000 });
    await waitFor('the owner to disappear', () => gone(leases, 'owner'), { timeoutMs: 15_000 });
  });

  it('Orphan: the dependents stay and lose only the reference to the deleted owner', async () => {
    const ns = await namespace();
    const owner = await configMaps(ns).create(cm('owner'));
    const other = await configMaps(ns).create(cm('other'));
    await configMaps(ns).create(cm('orphan-1', [refTo(owner, true)]));
    await configMaps(ns).create(cm('orphan-2', [refTo(owner), refTo(other)]));
    const answer = (await configMaps(ns).delete('owner', { propagationPolicy: 'Orphan' })) as ApiObject;
    expect(answer.metadata.finalizers).toEqual(['orphan']);
    await waitFor('the owner to disappear', () => gone(configMaps(ns), 'owner'), { timeoutMs: 15_000 });
    expect((await configMaps(ns).get('orphan-1')).metadata.ownerReferences).toBeUndefined();
    expect((await configMaps(ns).get('orphan-2')).metadata.ownerReferences).toEqual([refTo(other)]);
  });

  it('deletes namespaced dependents of a cluster-scoped owner, in every namespace', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const roles = new ResourceClient(env.api, R.clusterRoles());
    const role = await roles.create({
      apiVersion: `${R.clusterRoles().group}/v1`,
      kind: 'ClusterRole',
      metadata: { name: uniqueName('gc-owner') },
      rules: [],
    });
    await configMaps(a).create(cm('dep', [refTo(role)]));
    await configMaps(b).create(cm('dep', [refTo(role)]));
    await roles.delete(role.metadata.name ?? '');
    await waitFor('the dependent in the first namespace to be collected', () => gone(configMaps(a), 'dep'), {
      timeoutMs: 15_000,
    });
    await waitFor('the dependent in the second namespace to be collected', () => gone(configMaps(b), 'dep'), {
      timeoutMs: 15_000,
    });
  });

  it('stock kubectl: delete --cascade=foreground waits for the dependents, --cascade=orphan keeps them', async () => {
    const ns = await namespace();
    const home = await mkdtemp(join(tmpdir(), 'svc-gc-kubectl-'));
    try {
      const run = async (args: string[]) => {
        const r = await kubectl(env.server.svcconfigPath, ['-n', ns, ...args], { home, timeoutMs: 60_000 });
        if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
        return r.stdout.trim();
      };
      const fg = await configMaps(ns).create(cm('fg-owner'));
      await configMaps(ns).create(cm('fg-dep', [refTo(fg, true)]));
      expect(await run(['delete', 'configmap', 'fg-owner', '--cascade=foreground'])).toBe(
        'configmap "fg-owner" deleted',
      );
      // kubectl waited for the owner to be gone, which the blocking dependent had to be first.
      expect(await gone(configMaps(ns), 'fg-dep')).toBe(true);
      expect(await gone(configMaps(ns), 'fg-owner')).toBe(true);

      const or = await configMaps(ns).create(cm('or-owner'));
      await configMaps(ns).create(cm('or-dep', [refTo(or, true)]));
      expect(await run(['delete', 'configmap', 'or-owner', '--cascade=orphan'])).toBe('configmap "or-owner" deleted');
      expect(await gone(configMaps(ns), 'or-owner')).toBe(true);
      expect((await configMaps(ns).get('or-dep')).metadata.ownerReferences).toBeUndefined();
      expect(await run(['get', 'configmap', 'or-dep', '-o', 'name'])).toBe('configmap/or-dep');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
