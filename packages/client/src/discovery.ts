import { isNotFound, statusError } from '@svc/api/errors';
import type { APIResourceList } from '@svc/api/wire/discovery';
import type { RestClient } from './rest-client.js';
import type { ResourceRef } from './resource-client.js';
import { responseError } from './watch-stream.js';
import { sleep } from './logger.js';

export interface GroupVersion {
  /** `''` for the core group. */
  group: string;
  version: string;
}

/** A resource as discovery describes it: where it is served, its kind, scope and verbs. */
export interface ApiResource extends ResourceRef {
  namespaced: boolean;
  kind: string;
  singular: string;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  /** Subresource names (`status`, `scale`). */
  subresources: string[];
}

/** What to look up: a group version and either a kind or a resource name. */
export interface ResourceQuery {
  /** `v1`, `apps/v1`, `example.com/v1`. */
  apiVersion: string;
  /** The kind, exactly as declared (`Widget`). */
  kind?: string;
  /** Or a resource name: plural, singular or short name, in any case (`widgets`, `Widget`, `wd`). */
  resource?: string;
}

/** `v1` → core v1; `example.com/v1` → group `example.com`, version `v1`. */
export function parseApiVersion(apiVersion: string): GroupVersion {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** The discovery path of a group version: `/api/v1`, `/apis/<group>/<version>`. */
export function groupVersionPath(gv: GroupVersion): string {
  return gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`;
}

/** The resources of a discovery document, each with its subresources (pure). */
export function apiResources(list: APIResourceList): ApiResource[] {
  const gv = parseApiVersion(list.groupVersion);
  const byName = new Map<string, ApiResource>();
  for (const r of list.resources) {
    if (r.name.includes('/')) continue;
    byName.set(r.name, {
      ...gv,
      resource: r.name,
      namespaced: r.namespaced,
      kind: r.kind,
      singular: r.singularName || r.kind.toLowerCase(),
      verbs: r.verbs,
      shortNames: r.shortNames ?? [],
      categories: r.categories ?? [],
      subresources: [],
    });
  }
  for (const r of list.resources) {
    const [parent, sub] = r.name.split('/', 2);
    if (sub) byName.get(parent ?? '')?.subresources.push(sub);
  }
  return [...byName.values()];
}

/**
 * The resource `q` names in `list` (pure): by kind (exact), else by plural, singular or
 * short name (case-insensitive, as kubectl matches them); undefined when none matches.
 */
export function findApiResource(list: APIResourceList, q: Omit<ResourceQuery, 'apiVersion'>): ApiResource | undefined {
  const all = apiResources(list);
  if (q.kind !== undefined) return all.find((r) => r.kind === q.kind);
  const name = q.resource?.toLowerCase();
  if (name === undefined) throw new Error('a resource query needs a kind or a resource name');
  return (
    all.find((r) => r.resource === name) ??
    all.find((r) => r.singular === name) ??
    all.find((r) => r.shortNames.includes(name))
  );
}

/** GETs the discovery document of `apiVersion`; a group version the server does not serve throws NotFound. */
export async function discoverResources(
  client: RestClient,
  apiVersion: string,
  o: { signal?: AbortSignal } = {},
): Promise<ApiResource[]> {
  return apiResources(await fetchList(client, apiVersion, o.signal));
}

async function fetchList(client: RestClient, apiVersion: string, signal?: AbortSignal): Promise<APIResourceList> {
  const r = await client.request('GET', groupVersionPath(parseApiVersion(apiVersion)), { signal });
  if (r.status !== 200) throw responseError(r.status, r.body);
  return r.json<APIResourceList>();
}

/** Resolves `q` through the server's discovery; throws NotFound when it serves no such resource. */
export async function discoverResource(
  client: RestClient,
  q: ResourceQuery,
  o: { signal?: AbortSignal } = {},
): Promise<ApiResource> {
  const found = findApiResource(await fetchList(client, q.apiVersion, o.signal), q);
  if (!found) {
    const what = q.kind !== undefined ? `kind ${q.kind}` : `resource ${q.resource ?? ''}`;
    throw statusError('NotFound', `the server serves no ${what} in ${q.apiVersion}`);
  }
  return found;
}

/**
 * `discoverResource`, retried every 25 ms while the answer is NotFound (a CRD not yet
 * served); rejects after `timeoutMs` (default 10 s) with the last error, or when `signal` fires.
 */
export async function waitForResource(
  client: RestClient,
  q: ResourceQuery,
  o: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ApiResource> {
  const deadline = Date.now() + (o.timeoutMs ?? 10_000);
  for (;;) {
    try {
      return await discoverResource(client, q, o);
    } catch (e) {
      if (!isNotFound(e) || Date.now() > deadline || o.signal?.aborted) throw e;
    }
    await sleep(25, o.signal);
  }
}
