import { responseError, type GroupVersionResource, type RestClient } from '@svc/client';

/** One top-level resource (no subresource) a group version serves, as discovery describes it. */
export interface DiscoveredResource extends GroupVersionResource {
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** The version is its group's preferred one. */
  preferred: boolean;
}

async function getJson<T>(client: RestClient, path: string, signal?: AbortSignal): Promise<T> {
  const r = await client.request('GET', path, { signal });
  if (r.status !== 200) throw responseError(r.status, r.body);
  return r.json<T>();
}

/**
 * Every top-level resource the server serves, by discovery (`/api/v1`, then `/apis` and each
 * `/apis/<group>/<version>`): of every served version with `allVersions`, else of each
 * group's preferred version only. Fails when any group version cannot be read.
 */
export async function discoverResources(
  client: RestClient,
  o: { allVersions?: boolean; signal?: AbortSignal } = {},
): Promise<DiscoveredResource[]> {
  const gvs: Array<{ group: string; version: string; path: string; preferred: boolean }> = [
    { group: '', version: 'v1', path: '/api/v1', preferred: true },
  ];
  type GroupList = {
    groups?: Array<{ name: string; versions?: Array<{ version: string }>; preferredVersion?: { version: string } }>;
  };
  const groups = await getJson<GroupList>(client, '/apis', o.signal);
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    const versions = o.allVersions ? (g.versions ?? []).map((v) => v.version) : preferred ? [preferred] : [];
    for (const version of versions)
      gvs.push({ group: g.name, version, path: `/apis/${g.name}/${version}`, preferred: version === preferred });
  }
  type ResourceList = { resources?: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }> };
  const lists = await Promise.all(
    gvs.map(async (gv) => ({ gv, list: await getJson<ResourceList>(client, gv.path, o.signal) })),
  );
  return lists.flatMap(({ gv, list }) =>
    (list.resources ?? [])
      .filter((r) => !r.name.includes('/'))
      .map((r) => ({
        group: gv.group,
        version: gv.version,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced,
        verbs: r.verbs ?? [],
        preferred: gv.preferred,
      })),
  );
}

/** Every namespaced resource (preferred version of each group) that can be listed and deleted. */
export async function deletableNamespacedResources(
  client: RestClient,
): Promise<Array<GroupVersionResource & { deleteCollection: boolean }>> {
  return (await discoverResources(client))
    .filter(
      (r) =>
        r.namespaced &&
        r.verbs.includes('list') &&
        (r.verbs.includes('delete') || r.verbs.includes('deletecollection')),
    )
    .map((r) => ({
      group: r.group,
      version: r.version,
      resource: r.resource,
      deleteCollection: r.verbs.includes('deletecollection'),
    }));
}
