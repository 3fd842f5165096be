// The ResourceQuota admission plugin over an in-memory quota store: two servers whose caches lag
// behind each other's charges (the optimistic status write decides; the loser reads again and is
// checked again), dry runs, and the limitedResources configuration.
import {
  MODIFIED_CONFLICT,
  builtinCatalog,
  conflict,
  isStatusError,
  type ConfigMap,
  type ResourceQuota,
} from '@svc/api';
import type { AdmissionAttributes } from './admission.js';
import { ResourceQuotaAdmission, parseResourceQuotaConfig } from './resource-quota.js';

/** One quota in "etcd": a resourceVersion that moves on every write. */
class QuotaStore {
  quota: ResourceQuota;
  writes = 0;
  constructor(hard: Record<string, string>) {
    this.quota = {
      metadata: { name: 'q', namespace: 'ns', resourceVersion: '1' },
      spec: { hard },
      status: { hard, used: Object.fromEntries(Object.keys(hard).map((k) => [k, '0'])) },
    };
  }
  update(q: ResourceQuota): ResourceQuota {
    if (q.metadata.resourceVersion !== this.quota.metadata.resourceVersion)
      throw conflict({ group: '', resource: 'resourcequotas' }, 'q', MODIFIED_CONFLICT);
    this.writes++;
    this.quota = {
      ...structuredClone(q),
      metadata: { ...q.metadata, resourceVersion: String(Number(q.metadata.resourceVersion) + 1) },
    };
    return structuredClone(this.quota);
  }
}

/** A server whose cache holds `cached` (possibly stale) and writes to `store`. */
function server(store: QuotaStore, cached: () => ResourceQuota): ResourceQuotaAdmission {
  return new ResourceQuotaAdmission({
    cached: () => Promise.resolve([structuredClone(cached())]),
    fresh: () => Promise.resolve(structuredClone(store.quota)),
    updateStatus: (q) => Promise.resolve(store.update(q)),
  });
}

function create(name: string, dryRun = false): AdmissionAttributes {
  const resource = builtinCatalog().lookup('', 'v1', 'configmaps');
  if (!resource) throw new Error('no configmaps');
  const object: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } };
  return {
    operation: 'CREATE',
    resource,
    subresource: '',
    namespace: 'ns',
    name,
    object,
    dryRun,
    warnings: [],
    annotations: {},
  };
}

async function refusal(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return `${e.status.code} ${e.status.message ?? ''}`;
    throw e;
  }
  return 'admitted';
}

describe('ResourceQuota admission', () => {
  it('two servers with stale caches cannot both take the last unit', async () => {
    const store = new QuotaStore({ configmaps: '2' });
    const first = store.quota;
    // Both servers' caches still hold the quota as first created.
    const a = server(store, () => first);
    const b = server(store, () => first);
    await a.validate(create('one'));
    expect(store.quota.status?.used).toEqual({ configmaps: '1' });
    // b's write conflicts, it reads the quota again and charges the second unit.
    await b.validate(create('two'));
    expect(store.quota.status?.used).toEqual({ configmaps: '2' });
    expect(await refusal(a.validate(create('three')))).toBe(
      '403 configmaps "three" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2',
    );
    expect(await refusal(b.validate(create('four')))).toMatch(/^403 .*exceeded quota: q/);
    expect(store.writes).toBe(2);
  });

  it('one server charges concurrent requests one after the other', async () => {
    const store = new QuotaStore({ configmaps: '3' });
    const s = server(store, () => store.quota);
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => refusal(s.validate(create(n)))));
    expect(results.filter((r) => r === 'admitted')).toHaveLength(3);
    expect(store.quota.status?.used).toEqual({ configmaps: '3' });
  });

  it('checks dry runs without charging them', async () => {
    const store = new QuotaStore({ configmaps: '1' });
    const s = server(store, () => store.quota);
    expect(await refusal(s.validate(create('dry', true)))).toBe('admitted');
    expect(store.writes).toBe(0);
  });

  it('refuses kinds its configuration limits when no quota covers them', async () => {
    const limited = parseResourceQuotaConfig({
      apiVersion: 'apiserver.config.svc.io/v1',
      kind: 'ResourceQuotaConfiguration',
      limitedResources: [{ resource: 'configmaps', matchContains: ['configmaps'] }],
    });
    const s = new ResourceQuotaAdmission({
      limited,
      cached: () => Promise.resolve([]),
      fresh: () => Promise.resolve(undefined),
      updateStatus: (q) => Promise.resolve(q),
    });
    expect(await refusal(s.validate(create('x')))).toBe(
      '403 configmaps "x" is forbidden: insufficient quota to consume: configmaps,count/configmaps',
    );
    expect(() => parseResourceQuotaConfig({ kind: 'Other' })).toThrow(/ResourceQuotaConfiguration/);
  });
});
