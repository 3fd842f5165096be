import { StatusError, isExpired, type ApiObject, type ObjectList, type Status, type WatchEvent } from '@svc/api';
import type { RestClient } from './rest-client.js';
import { responseError, watch, type WatchOptions } from './watch-stream.js';
import { silentClientLogger, sleep, type ClientLogger } from './logger.js';

export interface ListOptions {
  limit?: number;
  continue?: string;
  signal?: AbortSignal;
}

/** Lists and watches one collection; the reflector's only view of the server. */
export interface ListerWatcher<T extends ApiObject = ApiObject> {
  list(opts: ListOptions): Promise<ObjectList<T>>;
  watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}

export interface GroupVersionResource {
  /** `''` for the core group. */
  group: string;
  version: string;
  resource: string;
}

export interface CollectionOptions {
  /** Only this namespace; unset = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** The collection path of a resource: `/api/v1/namespaces/ns/configmaps`, `/apis/g/v/leases`. */
export function collectionPath(gvr: GroupVersionResource, namespace?: string): string {
  const base = gvr.group ? `/apis/${gvr.group}/${gvr.version}` : `/api/${gvr.version}`;
  return namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${gvr.resource}` : `${base}/${gvr.resource}`;
}

/** A `ListerWatcher` over the REST API for one group/version/resource. */
export function listWatcherFor<T extends ApiObject = ApiObject>(
  client: RestClient,
  gvr: GroupVersionResource,
  o: CollectionOptions = {},
): ListerWatcher<T> {
  const path = collectionPath(gvr, o.namespace);
  return {
    async list(opts) {
      const q = new URLSearchParams();
      if (opts.limit) q.set('limit', String(opts.limit));
      if (opts.continue) q.set('continue', opts.continue);
      if (o.labelSelector) q.set('labelSelector', o.labelSelector);
      if (o.fieldSelector) q.set('fieldSelector', o.fieldSelector);
      const qs = q.toString();
      const r = await client.request('GET', qs ? `${path}?${qs}` : path, { signal: opts.signal });
      if (r.status !== 200) throw responseError(r.status, r.body);
      return r.json<ObjectList<T>>();
    },
    watch: (opts) =>
      watch<T>(client, path, { ...opts, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector }),
  };
}

/** Where a reflector delivers what it learns; called in server order, never concurrently. */
export interface ReflectorSink<T extends ApiObject> {
  /** The complete state at `resourceVersion` (after every list and relist). */
  replace(items: T[], resourceVersion: string): void;
  /** One ADDED, MODIFIED or DELETED event. */
  apply(event: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }): void;
}

export interface ReflectorOptions {
  /** Items per list page (default 500). */
  pageSize?: number;
  /** First back-off after an error (default 800 ms, as Kubernetes); doubles up to `backoffMaxMs`. */
  backoffInitialMs?: number;
  /** Back-off cap (default 30 s). */
  backoffMaxMs?: number;
  logger?: ClientLogger;
}

/**
 * Keeps a sink in step with a collection: list (paged), then watch from the list's
 * resourceVersion, tracking the last version seen (bookmarks included). A 410 (an ERROR
 * event or an expired list) relists at once; other failures back off exponentially (capped)
 * and watch again from the last version. A watch the server ends normally is reopened at once.
 */
export class Reflector<T extends ApiObject = ApiObject> {
  private rv: string | undefined;
  private lists = 0;
  private readonly pageSize: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly logger: ClientLogger;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    o: ReflectorOptions = {},
  ) {
    this.pageSize = o.pageSize ?? 500;
    this.backoffInitialMs = o.backoffInitialMs ?? 800;
    this.backoffMaxMs = o.backoffMaxMs ?? 30_000;
    this.logger = o.logger ?? silentClientLogger;
  }

  /** The last resourceVersion delivered or bookmarked. */
  get lastSyncResourceVersion(): string | undefined {
    return this.rv;
  }

  /** How many complete lists were done (1 after start, +1 per relist). */
  get listCount(): number {
    return this.lists;
  }

  /** Runs until `signal` fires; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let delay = this.backoffInitialMs;
    const backOff = async (): Promise<void> => {
      await sleep(delay, signal);
      delay = Math.min(delay * 2, this.backoffMaxMs);
    };
    while (!signal.aborted) {
      try {
        if (needList) {
          const { items, resourceVersion } = await this.listAll(signal);
          if (signal.aborted) return;
          this.sink.replace(items, resourceVersion);
          this.rv = resourceVersion;
          this.lists++;
          needList = false;
        }
        const started = Date.now();
        let events = 0;
        for await (const ev of await this.lw.watch({ resourceVersion: this.rv, allowWatchBookmarks: true, signal })) {
          if (ev.type === 'ERROR') throw new StatusError(ev.object as Status);
          const rv = (ev.object as T).metadata.resourceVersion;
          if (ev.type !== 'BOOKMARK') this.sink.apply({ type: ev.type, object: ev.object as T });
          if (rv) this.rv = rv;
          events++;
          delay = this.backoffInitialMs;
        }
        // A server that keeps closing empty watches at once is backed off like an error.
        if (events === 0 && Date.now() - started < 1000) await backOff();
      } catch (e) {
        if (signal.aborted) return;
        if (isExpired(e) || (e instanceof StatusError && e.code === 410)) {
          this.logger.info('resourceVersion too old, relisting', { resourceVersion: this.rv });
          if (needList) await backOff();
          needList = true;
          continue;
        }
        this.logger.warn('list/watch failed, backing off', { error: String(e), delayMs: delay });
        await backOff();
      }
    }
  }

  private async listAll(signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.lw.list({ limit: this.pageSize, continue: cont, signal });
      if (!resourceVersion) resourceVersion = page.metadata.resourceVersion ?? '';
      items.push(...page.items);
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }
}
