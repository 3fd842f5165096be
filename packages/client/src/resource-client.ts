import { isNotFound, type ApiObject, type WatchEvent } from '@svc/api';
import type { RestClient } from './rest-client.js';
import { collectionPath, type GroupVersionResource } from './reflector.js';
import { codecOf } from './codec.js';
import { responseError, watch, type WatchOptions } from './watch-stream.js';

/** The list envelope the API returns. */
export interface ObjectList<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_MEDIA: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
}

export interface PatchOptions extends WriteOptions {
  /** How the server reads the patch (its media type). */
  type: PatchType;
  /** Server-side apply only: take over conflicting fields. */
  force?: boolean;
  subresource?: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  signal?: AbortSignal;
}

/**
 * A resource by group/version/resource, with its scope when known (from discovery or the
 * caller): `namespaced: false` refuses `namespace()`; `namespaced: true` lets a client with
 * no namespace write an object to the namespace in its `metadata.namespace`.
 */
export interface ResourceRef extends GroupVersionResource {
  namespaced?: boolean;
}

/**
 * Dynamic access to one resource by group/version/resource, typed by `T`: every verb of the
 * REST API, answers decoded from JSON, and any non-2xx answer thrown as the server's
 * `Status` (a `StatusError`, so `isNotFound(e)` and friends work).
 */
export class ResourceClient<T extends ApiObject = ApiObject> {
  constructor(
    private readonly client: RestClient,
    readonly gvr: ResourceRef,
    private readonly ns?: string,
  ) {}

  /** The same resource in `namespace` (namespaced resources; throws for a cluster-scoped one). */
  namespace(namespace: string): ResourceClient<T> {
    if (this.gvr.namespaced === false) throw new Error(`${this.gvr.resource} is cluster-scoped: it has no namespace`);
    return new ResourceClient<T>(this.client, this.gvr, namespace);
  }

  /** The namespace this client is bound to, if any. */
  get namespaceName(): string | undefined {
    return this.ns;
  }

  /** The client's namespace, else (a namespaced resource) the object's own. */
  private nsOf(obj: T): string | undefined {
    return this.ns ?? (this.gvr.namespaced ? obj.metadata.namespace : undefined);
  }

  private path(o: { name?: string; subresource?: string; query?: URLSearchParams; ns?: string } = {}): string {
    let p = collectionPath(this.gvr, 'ns' in o ? o.ns : this.ns);
    if (o.name !== undefined) p += `/${encodeURIComponent(o.name)}`;
    if (o.subresource) p += `/${o.subresource}`;
    const q = o.query?.toString();
    return q ? `${p}?${q}` : p;
  }

  /** One request in the client's wire format; a non-2xx answer is thrown as its Status. */
  private async call<R>(
    method: string,
    path: string,
    o: { obj?: T; body?: object | string; contentType?: string; signal?: AbortSignal } = {},
  ): Promise<R> {
    const codec = codecOf(this.client);
    const encoded = o.obj ? codec.encode(this.gvr, o.obj) : { body: o.body, contentType: o.contentType };
    const r = await this.client.request(method, path, {
      body: encoded.body,
      contentType: encoded.contentType,
      accept: codec.accept(this.gvr),
      signal: o.signal,
    });
    const contentType = r.headers['content-type'];
    if (r.status < 200 || r.status >= 300) {
      let status: unknown;
      try {
        status = codec.decode(this.gvr, contentType, r.body);
      } catch {
        throw responseError(r.status, r.body);
      }
      throw responseError(r.status, JSON.stringify(status));
    }
    return codec.decode<R>(this.gvr, contentType, r.body);
  }

  private static writeQuery(o: WriteOptions & { force?: boolean }): URLSearchParams {
    const q = new URLSearchParams();
    if (o.dryRun) q.set('dryRun', 'All');
    if (o.fieldManager) q.set('fieldManager', o.fieldManager);
    if (o.force) q.set('force', 'true');
    return q;
  }

  get(name: string, o: { subresource?: string; signal?: AbortSignal } = {}): Promise<T> {
    return this.call<T>('GET', this.path({ name, subresource: o.subresource }), { signal: o.signal });
  }

  /** `get`, but undefined when there is no such object (404). */
  async find(name: string, o: { signal?: AbortSignal } = {}): Promise<T | undefined> {
    try {
      return await this.get(name, o);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  list(
    o: {
      labelSelector?: string;
      fieldSelector?: string;
      limit?: number;
      continue?: string;
      resourceVersion?: string;
      signal?: AbortSignal;
    } = {},
  ): Promise<ObjectList<T>> {
    const q = new URLSearchParams();
    for (const k of ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion'] as const) {
      if (o[k] !== undefined) q.set(k, String(o[k]));
    }
    return this.call<ObjectList<T>>('GET', this.path({ query: q }), { signal: o.signal });
  }

  /** A watch on the collection (this client's namespace, else all); see `watch()` in watch-stream.ts. */
  watch(o: WatchOptions = {}): Promise<AsyncIterable<WatchEvent<T>>> {
    return watch<T>(this.client, collectionPath(this.gvr, this.ns), o);
  }

  create(obj: T, o: WriteOptions = {}): Promise<T> {
    return this.call<T>('POST', this.path({ query: ResourceClient.writeQuery(o), ns: this.nsOf(obj) }), {
      obj,
      signal: o.signal,
    });
  }

  /** PUT of the whole object (its `metadata.resourceVersion` is the precondition), or of a subresource. */
  update(obj: T, o: WriteOptions & { subresource?: string } = {}): Promise<T> {
    // Subresources other than status take other kinds (Scale, DeleteOptions...): JSON.
    const sameKind = !o.subresource || o.subresource === 'status';
    return this.call<T>(
      'PUT',
      this.path({
        name: obj.metadata.name,
        subresource: o.subresource,
        query: ResourceClient.writeQuery(o),
        ns: this.nsOf(obj),
      }),
      sameKind ? { obj, signal: o.signal } : { body: obj, signal: o.signal },
    );
  }

  /** PATCH of `patch` (an object, or text sent as it is) read as `o.type`. */
  patch(name: string, patch: object | string, o: PatchOptions): Promise<T> {
    return this.call<T>('PATCH', this.path({ name, subresource: o.subresource, query: ResourceClient.writeQuery(o) }), {
      body: typeof patch === 'string' ? patch : JSON.stringify(patch),
      contentType: PATCH_MEDIA[o.type],
      signal: o.signal,
    });
  }

  /** Server-side apply of `obj` as `fieldManager`. */
  apply(obj: T, o: WriteOptions & { fieldManager: string; force?: boolean }): Promise<T> {
    return this.patch(obj.metadata.name ?? '', JSON.stringify(obj), { ...o, type: 'apply' });
  }

  /** Deletes; resolves with the answer (the object while finalizers or graceful deletion hold it, else a Status). */
  delete(name: string, o: DeleteOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy;
    if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
    if (o.preconditions) body.preconditions = o.preconditions;
    return this.call('DELETE', this.path({ name }), { body, signal: o.signal });
  }
}
