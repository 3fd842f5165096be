/**
 * A policy's parameters: one informer per paramKind in use (ConfigMaps, custom resources,
 * any served kind), started when a policy first needs it and stopped when no policy does;
 * and Kubernetes' CollectParams: a binding's paramRef by name or selector, in the request's
 * namespace (or the paramRef's) for namespaced kinds, with `parameterNotFoundAction`.
 */
import type { ApiObject, Catalog, ParamKind, ParamRef, ResourceType } from '@svc/api';
import type { Logger } from '@svc/component-base';
import { labelSelectorFromObject } from '@svc/machinery';
import { StoreInformer } from '../../authz/rbac/informer.js';
import type { GenericStore } from '../../registry/store.js';

/** One paramKind's informer. */
export interface ParamSource {
  namespaced: boolean;
  informer: StoreInformer;
}

/** Go's `%v` of a ParamKind, as Kubernetes' messages print it. */
export function paramKindString(pk: ParamKind): string {
  return `&ParamKind{APIVersion:${pk.apiVersion ?? ''},Kind:${pk.kind ?? ''},}`;
}

function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const at = apiVersion.indexOf('/');
  return at < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, at), version: apiVersion.slice(at + 1) };
}

interface Running extends ParamSource {
  stop: AbortController;
}

export class ParamSources {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly d: {
      catalog: Catalog;
      storeFor(r: ResourceType): GenericStore;
      signal: AbortSignal;
      log: Logger;
    },
  ) {}

  /** The informer of `pk`'s resource, started if needed; an Error when no served type has that kind. */
  ensure(pk: ParamKind): { key: string; source: ParamSource } | Error {
    const { group, version } = parseApiVersion(pk.apiVersion ?? '');
    const kind = pk.kind ?? '';
    const type = this.d.catalog.byKind(group, version, kind);
    if (!type) return new Error(`failed to find resource referenced by paramKind: '${group}/${version}, Kind=${kind}'`);
    const key = `${group}/${version}/${type.plural}`;
    let r = this.running.get(key);
    if (!r) {
      const stop = new AbortController();
      const signal = AbortSignal.any([stop.signal, this.d.signal]);
      const storeOf = (): GenericStore => {
        const t = this.d.catalog.lookup(group, version, type.plural);
        if (!t) throw new Error(`${key} is not served`);
        return this.d.storeFor(t);
      };
      const informer = new StoreInformer(storeOf, (e) => {
        this.d.log.warn('param informer failed; relisting', { resource: key, error: (e as Error).message });
      });
      informer.run(signal).catch((e: unknown) => this.d.log.warn('param informer ended', { error: String(e) }));
      r = { namespaced: type.namespaced, informer, stop };
      this.running.set(key, r);
    }
    return { key, source: r };
  }

  /** Stops the informers of kinds no policy uses any more. */
  retain(keys: ReadonlySet<string>): void {
    for (const [k, r] of this.running) {
      if (keys.has(k)) continue;
      r.stop.abort();
      this.running.delete(k);
    }
  }
}

const SYNC_WAIT_MS = 1000;

async function syncedWithin(informer: StoreInformer, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  try {
    return await Promise.race([informer.synced.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Kubernetes' CollectParams: the params one binding evaluates with (`[null]` without a
 * paramKind or paramRef, `[]` when none were found and the binding allows that); an Error is
 * a configuration error.
 */
export async function collectParams(o: {
  paramKind?: ParamKind;
  source?: ParamSource;
  paramRef?: ParamRef;
  namespace: string;
}): Promise<Array<ApiObject | null> | Error> {
  const { paramKind, source, paramRef } = o;
  if (!paramKind || !paramRef) return [null];
  if (!source) return new Error(`paramKind kind \`${paramKindString(paramKind)}\` not known`);
  let namespace = '';
  if (source.namespaced) {
    namespace = paramRef.namespace || o.namespace;
    if (namespace === '')
      return new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  }
  if (!(await syncedWithin(source.informer, SYNC_WAIT_MS)))
    return new Error(`paramKind kind \`${paramKindString(paramKind)}\` not yet synced to use for admission`);
  let params: ApiObject[];
  if (paramRef.namespace && !source.namespaced) {
    return new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  } else if (paramRef.name) {
    if (paramRef.selector) return new Error('paramRef.name and paramRef.selector are mutually exclusive');
    const p = source.informer.get(namespace, paramRef.name);
    params = p ? [p] : [];
  } else if (paramRef.selector) {
    let sel;
    try {
      sel = labelSelectorFromObject(paramRef.selector);
    } catch (e) {
      return e as Error;
    }
    params = [];
    for (const p of source.informer.list()) {
      if (source.namespaced && (p.metadata.namespace ?? '') !== namespace) continue;
      if (sel.matches(p.metadata.labels ?? {})) params.push(p);
    }
  } else {
    return new Error('one of name or selector must be provided');
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === 'Deny')
    return new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  return params;
}
