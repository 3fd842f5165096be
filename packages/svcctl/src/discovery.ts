import { NAMINGS, type NamingScheme } from '@svc/api/names';
import { byKubeVersionPriority } from '@svc/api/kube-version';
import type { APIResourceList } from '@svc/api/wire/discovery';
import { apiResources, type ApiResource } from '@svc/client/rest';
import { CliError } from './errors.js';
import type { Session } from './session.js';

/** A resource the server serves, with its group's place in discovery. */
export interface ServedResource extends ApiResource {
  /** Is `version` its group's preferred version. */
  preferred: boolean;
}

export interface ServedGroup {
  /** `''` for the core group. */
  name: string;
  /** Highest priority first; the first is the preferred version. */
  versions: string[];
  preferredVersion: string;
}

interface DiscoveryResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: string;
  singularResource?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: Array<{ subresource: string }>;
}

interface GroupDiscovery {
  metadata?: { name?: string };
  versions?: Array<{ version: string; resources?: DiscoveryResource[] }>;
}

interface GroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  items?: GroupDiscovery[];
}

/** The Accept of aggregated discovery, in every spelling of its group the server may speak. */
function aggregatedAccept(): string {
  const spellings = [NAMINGS.svc.groupSuffix, NAMINGS.kubernetes.groupSuffix].map(
    (sfx) => `application/json;g=apidiscovery.${sfx};v=v2;as=APIGroupDiscoveryList`,
  );
  return [...spellings, 'application/json'].join(',');
}

/** The naming a server speaks, read from the groups it serves (under the svc suffix or not). */
export function namingOfGroups(groups: readonly string[]): NamingScheme {
  return groups.some((g) => g.endsWith(`.${NAMINGS.svc.groupSuffix}`)) ? 'svc' : 'kubernetes';
}

function fromAggregated(
  list: GroupDiscoveryList,
  core: boolean,
): { groups: ServedGroup[]; resources: ServedResource[] } {
  const groups: ServedGroup[] = [];
  const resources: ServedResource[] = [];
  for (const g of list.items ?? []) {
    const name = core ? '' : (g.metadata?.name ?? '');
    const versions = (g.versions ?? []).map((v) => v.version);
    if (versions.length === 0) continue;
    groups.push({ name, versions, preferredVersion: versions[0] ?? '' });
    for (const v of g.versions ?? []) {
      for (const r of v.resources ?? []) {
        resources.push({
          group: name,
          version: v.version,
          resource: r.resource,
          namespaced: r.scope === 'Namespaced',
          kind: r.responseKind?.kind ?? '',
          singular: r.singularResource || (r.responseKind?.kind ?? '').toLowerCase(),
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          categories: r.categories ?? [],
          subresources: (r.subresources ?? []).map((s) => s.subresource),
          preferred: v.version === versions[0],
        });
      }
    }
  }
  return { groups, resources };
}

/** A `resource[.version][.group]` argument as kubectl reads it. */
function splitResourceArg(arg: string): Array<{ resource: string; version?: string; group?: string }> {
  const lower = arg.toLowerCase();
  const parts = lower.split('.');
  const out: Array<{ resource: string; version?: string; group?: string }> = [];
  if (parts.length >= 3) out.push({ resource: parts[0] ?? '', version: parts[1], group: parts.slice(2).join('.') });
  if (parts.length >= 2) out.push({ resource: parts[0] ?? '', group: parts.slice(1).join('.') });
  out.push({ resource: lower });
  return out;
}

/**
 * What the server serves, read once per invocation from its discovery: aggregated discovery
 * (`/api` and `/apis` in two requests) where the server offers it, else the group lists and
 * each group version's resource list. Resources are ordered as kubectl ranks them: the core
 * group first, then the groups in the server's order, preferred versions first.
 */
export class Discovery {
  private constructor(
    readonly groups: ServedGroup[],
    readonly resources: ServedResource[],
    /** The naming the server speaks (its last-applied annotation, its group suffix). */
    readonly naming: NamingScheme,
  ) {}

  static async load(session: Session): Promise<Discovery> {
    const accept = aggregatedAccept();
    const [core, rest] = await Promise.all([
      session.call<Record<string, unknown>>('GET', '/api', { accept }),
      session.call<Record<string, unknown>>('GET', '/apis', { accept }),
    ]);
    let groups: ServedGroup[] = [];
    let resources: ServedResource[];
    if (core.kind === 'APIGroupDiscoveryList' && rest.kind === 'APIGroupDiscoveryList') {
      const a = fromAggregated(core as unknown as GroupDiscoveryList, true);
      const b = fromAggregated(rest as unknown as GroupDiscoveryList, false);
      groups = [...a.groups, ...b.groups];
      resources = [...a.resources, ...b.resources];
    } else {
      const coreVersions = ((core.versions as string[] | undefined) ?? []).slice();
      if (coreVersions.length > 0)
        groups.push({ name: '', versions: coreVersions, preferredVersion: coreVersions[0] ?? '' });
      for (const g of (rest.groups as Array<{
        name: string;
        versions: Array<{ version: string }>;
        preferredVersion?: { version: string };
      }>) ?? []) {
        const versions = byKubeVersionPriority(g.versions.map((v) => v.version));
        const preferred = g.preferredVersion?.version ?? versions[0] ?? '';
        groups.push({
          name: g.name,
          versions: [preferred, ...versions.filter((v) => v !== preferred)],
          preferredVersion: preferred,
        });
      }
      const lists = await Promise.all(
        groups.flatMap((g) =>
          g.versions.map(async (v) => {
            const path = g.name ? `/apis/${g.name}/${v}` : `/api/${v}`;
            const list = await session.call<APIResourceList>('GET', path);
            return apiResources(list).map((r) => ({ ...r, preferred: v === g.preferredVersion }));
          }),
        ),
      );
      resources = lists.flat();
    }
    return new Discovery(groups, resources, namingOfGroups(groups.map((g) => g.name)));
  }

  /** Built for tests and offline use. */
  static of(groups: ServedGroup[], resources: ServedResource[]): Discovery {
    return new Discovery(groups, resources, namingOfGroups(groups.map((g) => g.name)));
  }

  /** The rank of a resource: group order, then preferred version first, then version priority. */
  private rank(r: ServedResource): number {
    const gi = this.groups.findIndex((g) => g.name === r.group);
    const g = this.groups[gi];
    const vi = g ? g.versions.indexOf(r.version) : 0;
    return gi * 1000 + (r.preferred ? 0 : 1 + vi);
  }

  private sorted(list: ServedResource[]): ServedResource[] {
    return [...list].sort((a, b) => this.rank(a) - this.rank(b));
  }

  /** Every resource matching `name` (plural, singular, short name or kind, any case). */
  private matching(name: string, o: { group?: string; version?: string }): ServedResource[] {
    const hits = this.resources.filter(
      (r) =>
        (o.group === undefined || r.group === o.group) &&
        (o.version === undefined || r.version === o.version) &&
        (r.resource === name || r.singular === name || r.shortNames.includes(name) || r.kind.toLowerCase() === name),
    );
    return this.sorted(hits);
  }

  /** The resource an argument names (`pods`, `po`, `Pod`, `deployments.apps`, `deployments.v1.apps`), or undefined. */
  find(arg: string): ServedResource | undefined {
    for (const q of splitResourceArg(arg)) {
      const hit = this.matching(q.resource, q)[0];
      if (hit) return hit;
    }
    return undefined;
  }

  /** Like `find`; a category (`all`) expands to its resources. Throws kubectl's error when nothing matches. */
  resolve(arg: string): ServedResource[] {
    const hit = this.find(arg);
    if (hit) return [hit];
    const inCategory = this.preferredResources().filter((r) => r.categories.includes(arg.toLowerCase()));
    if (inCategory.length > 0) return inCategory;
    throw new CliError(`the server doesn't have a resource type "${arg}"`);
  }

  /** The resource of a kind in an apiVersion (a manifest's object). */
  forKind(apiVersion: string, kind: string): ServedResource | undefined {
    const i = apiVersion.indexOf('/');
    const group = i < 0 ? '' : apiVersion.slice(0, i);
    const version = i < 0 ? apiVersion : apiVersion.slice(i + 1);
    return this.resources.find((r) => r.group === group && r.version === version && r.kind === kind);
  }

  /** One entry per group and resource: the preferred version's, in rank order. */
  preferredResources(): ServedResource[] {
    const seen = new Set<string>();
    const out: ServedResource[] = [];
    for (const r of this.sorted(this.resources)) {
      const key = `${r.group}/${r.resource}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(r);
    }
    return out;
  }

  /** The server's spelling of a built-in group: `rbac.authorization` with the server's group suffix. */
  group(prefix: string): string {
    return `${prefix}.${NAMINGS[this.naming].groupSuffix}`;
  }

  /** The resource of a built-in type (`group('authorization')`, `selfsubjectaccessreviews`); throws when not served. */
  builtin(o: { group: string; resource: string }): ServedResource {
    const hit = this.sorted(this.resources.filter((r) => r.group === o.group && r.resource === o.resource))[0];
    if (!hit)
      throw new CliError(
        `the server doesn't have a resource type "${o.resource}"${o.group ? ` in group "${o.group}"` : ''}`,
      );
    return hit;
  }
}

/** `configmap`, `deployment.apps`: how kubectl names a kind in `kind/name` output. */
export function kindPrefix(r: { kind: string; group: string }): string {
  return r.group ? `${r.kind.toLowerCase()}.${r.group}` : r.kind.toLowerCase();
}

/** `/api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]]`. */
export function resourcePath(
  r: { group: string; version: string; resource: string; namespaced: boolean },
  o: { namespace?: string; name?: string; subresource?: string } = {},
): string {
  let p = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespaced && o.namespace) p += `/namespaces/${encodeURIComponent(o.namespace)}`;
  p += `/${r.resource}`;
  if (o.name !== undefined) p += `/${encodeURIComponent(o.name)}`;
  if (o.subresource) p += `/${o.subresource}`;
  return p;
}

/** `apps/v1` or `v1`. */
export function apiVersionOf(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}
