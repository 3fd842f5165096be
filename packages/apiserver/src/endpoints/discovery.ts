import type { Catalog, ResourceType } from '@svc/api';
import { groupVersion, scaleKind } from '@svc/api';

/** `/api`: the core group's versions. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(catalog: Catalog, name: string): object | undefined {
  const g = catalog.groups().find((x) => x.group === name);
  if (!g) return undefined;
  const versions = g.versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions, preferredVersion: versions[0] };
}

/** `/apis`: every named group. */
export function apiGroupList(catalog: Catalog): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: catalog
      .groups()
      .filter((g) => g.group !== '')
      .map((g) => {
        const { kind: _k, apiVersion: _a, ...rest } = apiGroup(catalog, g.group) as Record<string, unknown>;
        return rest;
      }),
  };
}

export function apiGroupDoc(catalog: Catalog, name: string): object | undefined {
  return apiGroup(catalog, name);
}

/**
 * The subresources discovery lists, with the kind each answers with and its verbs (`status`,
 * `scale`, `approval`; `log` answers text, listed with its parent's kind as Kubernetes does).
 */
function subresourceKinds(
  r: ResourceType,
): Array<{ name: string; kind: { group: string; version: string; kind: string }; verbs: string[] }> {
  const scale = scaleKind();
  const writable = ['get', 'patch', 'update'];
  return r.subresources.flatMap((name) => {
    if (name === 'status' || name === 'approval' || name === 'ephemeralcontainers')
      return [{ name, kind: { group: r.group, version: r.version, kind: r.kind }, verbs: writable }];
    if (name === 'scale')
      return [{ name, kind: { group: scale.group, version: scale.version, kind: scale.kind }, verbs: writable }];
    if (name === 'log') return [{ name, kind: { group: r.group, version: r.version, kind: r.kind }, verbs: ['get'] }];
    if (name === 'binding') return [{ name, kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] }];
    if (name === 'eviction')
      return [{ name, kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] }];
    const connect: Record<string, string> = {
      exec: 'PodExecOptions',
      attach: 'PodAttachOptions',
      portforward: 'PodPortForwardOptions',
    };
    const proxyOptions: Record<string, string> = {
      pods: 'PodProxyOptions',
      services: 'ServiceProxyOptions',
      nodes: 'NodeProxyOptions',
    };
    const proxied = name === 'proxy' && r.group === '' ? proxyOptions[r.plural] : undefined;
    if (proxied)
      return [
        {
          name,
          kind: { group: '', version: 'v1', kind: proxied },
          verbs: ['create', 'delete', 'get', 'patch', 'update'],
        },
      ];
    const options = connect[name];
    if (options) return [{ name, kind: { group: '', version: 'v1', kind: options }, verbs: ['create', 'get'] }];
    return [];
  });
}

function resourceEntries(r: ResourceType): object[] {
  const main = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: [...r.verbs].sort(),
    ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
    ...(r.categories.length ? { categories: r.categories } : {}),
    storageVersionHash: storageVersionHash(r),
  };
  const subs = subresourceKinds(r).map(({ name, kind: k, verbs }) => ({
    name: `${r.plural}/${name}`,
    singularName: '',
    namespaced: r.namespaced,
    ...(k.group !== r.group || k.version !== r.version ? { group: k.group, version: k.version } : {}),
    kind: k.kind,
    verbs,
  }));
  return [main, ...subs];
}

/** `/api/v1`, `/apis/<g>/<v>`: the resources of one group version. */
export function apiResourceList(catalog: Catalog, group: string, version: string): object | undefined {
  const resources = catalog.resources(group, version);
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion({ group, version }),
    resources: resources.flatMap(resourceEntries),
  };
}

function storageVersionHash(r: ResourceType): string {
  let h = 0x811c9dc5;
  for (const c of `${r.group}/${r.version}/${r.kind}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return Buffer.from(h.toString(16).padStart(8, '0')).toString('base64').slice(0, 11);
}

/**
 * The aggregated discovery document (`APIGroupDiscoveryList`, v2) that kubectl asks for
 * first; `groupSuffix` names the apidiscovery group the client asked in.
 */
export function aggregatedDiscovery(catalog: Catalog, core: boolean, apidiscoveryGroup: string): object {
  const groups = catalog.groups().filter((g) => (g.group === '') === core);
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `${apidiscoveryGroup}/v2`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        resources: catalog.resources(g.group, v).map((r) => ({
          resource: r.plural,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular,
          verbs: [...r.verbs].sort(),
          ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
          ...(r.categories.length ? { categories: r.categories } : {}),
          ...(subresourceKinds(r).length
            ? {
                subresources: subresourceKinds(r).map(({ name, kind, verbs }) => ({
                  subresource: name,
                  responseKind: kind,
                  verbs,
                })),
              }
            : {}),
        })),
        freshness: 'Current',
      })),
    })),
  };
}
