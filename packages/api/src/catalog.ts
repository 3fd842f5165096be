import type { Schema } from './schema.js';
import type { ApiObject } from './types.js';
import { byKubeVersionPriority } from './kube-version.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** How a type's names are validated. */
export type NameRule = 'dns-subdomain' | 'dns-label' | 'path-segment';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0 = shown by default, >0 only with `-o wide`. */
  priority?: number;
  /** The cell of one object; `now` is the time the table is built (for ages). */
  cell: (obj: ApiObject, now: number) => unknown;
}

/**
 * Where the `scale` subresource (autoscaling/v1 Scale) reads and writes: dotted paths, as a
 * custom resource's `subresources.scale` names them (without the leading dot).
 */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** A label selector object (built-in workloads' `spec.selector`) or its text form. */
  labelSelectorPath?: string;
  /** The selector is a plain label map (core/v1 ReplicationController's `spec.selector`). */
  labelSelectorIsMap?: boolean;
}

/** One served resource type: everything handlers, storage and discovery need to know. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  /** Kind of the collection; `<kind>List` unless said otherwise. */
  listKind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  namespaced: boolean;
  verbs: readonly Verb[];
  /** Subresources served (`status` is the one generic subresource). */
  subresources: readonly string[];
  /** The paths behind the `scale` subresource, for types that serve it. */
  scale?: ScalePaths;
  nameRule: NameRule;
  schema: Schema;
  /** Table columns (Kubernetes' printer columns); `Name` and `Created At` when absent. */
  tableColumns?: readonly TableColumn[];
  /** Field selector keys beyond metadata.name / metadata.namespace. */
  fieldSelectors?: Readonly<Record<string, (obj: ApiObject) => string>>;
  /** Spec changes bump `metadata.generation` (types with a spec). */
  hasSpec: boolean;
  /** Does the server accept strategic merge patches for this type. */
  strategicMerge: boolean;
  /**
   * Never stored: each create is answered by the server from the request alone (reviews
   * such as SelfSubjectReview). No storage, no watch cache; only the `create` verb.
   */
  virtual?: boolean;
  /**
   * Objects of this type live in another type's storage, converted on the way in and out
   * (events.<suffix>/v1 Events are stored as core Events, as in Kubernetes). The type has
   * no storage prefix or watch cache of its own.
   */
  storedAs?: StoredAs;
  /** Set for a type defined by a CustomResourceDefinition (one entry per served version). */
  custom?: CustomResourceInfo;
}

/** What a custom resource's catalog entry carries beyond a built-in's. */
export interface CustomResourceInfo {
  /** The version's `schema.openAPIV3Schema` as written (published in OpenAPI, validated against). */
  openApiSchema?: Readonly<Record<string, unknown>>;
  /** The version objects are stored in. */
  storageVersion: string;
  /** Every request to a deprecated version gets a `Warning` header with this text. */
  deprecationWarning?: string;
  /** The defining CRD's name and uid. */
  crdName: string;
  crdUid: string;
  /** The CRD is being deleted: no new objects. */
  terminating?: boolean;
}

/** The type whose storage another type shares, and the conversions between the two. */
export interface StoredAs {
  group: string;
  plural: string;
  toStored(obj: ApiObject): ApiObject;
  fromStored(obj: ApiObject): ApiObject;
}

export type ResourceTypeInput = Omit<
  ResourceType,
  'listKind' | 'shortNames' | 'categories' | 'subresources' | 'verbs' | 'nameRule' | 'hasSpec' | 'strategicMerge'
> &
  Partial<
    Pick<
      ResourceType,
      'listKind' | 'shortNames' | 'categories' | 'subresources' | 'verbs' | 'nameRule' | 'hasSpec' | 'strategicMerge'
    >
  >;

export function defineResource(r: ResourceTypeInput): ResourceType {
  return {
    listKind: `${r.kind}List`,
    shortNames: [],
    categories: [],
    subresources: [],
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    hasSpec: true,
    strategicMerge: true,
    ...r,
  };
}

export function groupVersion(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

export interface GroupVersions {
  group: string;
  versions: string[];
  preferredVersion: string;
}

/**
 * The resource catalog. Entries come from compiled-in type files at start-up and, later,
 * from custom resource definitions at run time; nothing assumes a type is compiled in.
 */
export class Catalog {
  private readonly byPath = new Map<string, ResourceType>();
  private readonly groupOrder: string[] = [];
  private changes = 0;

  /** Moves on every add and remove (what is derived from the catalog is stale when it changed). */
  get revision(): number {
    return this.changes;
  }

  add(r: ResourceType): void {
    const key = this.key(r.group, r.version, r.plural);
    if (this.byPath.has(key)) throw new Error(`duplicate resource ${key}`);
    this.byPath.set(key, r);
    if (!this.groupOrder.includes(r.group)) this.groupOrder.push(r.group);
    this.changes++;
  }

  remove(group: string, version: string, plural: string): void {
    if (this.byPath.delete(this.key(group, version, plural))) this.changes++;
    const at = this.groupOrder.indexOf(group);
    if (at >= 0 && !this.all().some((r) => r.group === group)) this.groupOrder.splice(at, 1);
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byPath.get(this.key(group, version, plural));
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    for (const r of this.byPath.values()) if (r.group === group && r.version === version && r.kind === kind) return r;
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.byPath.values()];
  }

  resources(group: string, version: string): ResourceType[] {
    return this.all().filter((r) => r.group === group && r.version === version);
  }

  /**
   * Groups in registration order (core first), each with its versions in Kubernetes' priority
   * order (GA before beta before alpha, newest first); the first is the preferred version.
   */
  groups(): GroupVersions[] {
    return this.groupOrder.flatMap((g) => {
      const versions = byKubeVersionPriority([
        ...new Set(
          this.all()
            .filter((r) => r.group === g)
            .map((r) => r.version),
        ),
      ]);
      const [preferredVersion] = versions;
      return preferredVersion === undefined ? [] : [{ group: g, versions, preferredVersion }];
    });
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.all().some((r) => r.group === group && r.version === version);
  }

  private key(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }
}
