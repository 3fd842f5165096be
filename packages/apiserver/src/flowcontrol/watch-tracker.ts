import type { RequestInfo } from '../endpoints/request-info.js';
import { exactFieldMatch, requestedName } from './work-estimator.js';

/**
 * Resources whose watch cache indexes a field: a watch selecting one value of it (a node's
 * pods) hears only that value's events and is not counted for the writes of others.
 */
const INDEXED_FIELDS: Record<string, string> = { pods: 'spec.nodeName' };

/** Verbs that write nothing a watch hears. */
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch', 'proxy']);

const keyOf = (parts: { group: string; resource: string; namespace: string; name: string }): string =>
  `${parts.group}\u0000${parts.resource}\u0000${parts.namespace}\u0000${parts.name}`;

/**
 * The open watches by what they watch (Kubernetes' watch tracker): group, resource,
 * namespace (or all) and name (or all). A write's interested watches are those of its
 * resource in all namespaces, in its namespace, and of its object.
 */
export class WatchTracker {
  private readonly counts = new Map<string, number>();

  /** Counts a watch that started; returns the function that forgets it (once). */
  register(info: RequestInfo): () => void {
    if (info.verb !== 'watch') return () => undefined;
    const indexed = INDEXED_FIELDS[info.resource];
    if (indexed) {
      // As Kubernetes approximates: a watch selecting one value of the index is never counted.
      const value = exactFieldMatch(info.query.get('fieldSelector'), indexed);
      if (value !== undefined && value !== '') return () => undefined;
    }
    const key = keyOf({
      group: info.apiGroup,
      resource: info.resource,
      namespace: info.namespace,
      name: requestedName(info),
    });
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const n = (this.counts.get(key) ?? 1) - 1;
      if (n <= 0) this.counts.delete(key);
      else this.counts.set(key, n);
    };
  }

  /** The watches a write by this request notifies (0 for reads). */
  interested(info: RequestInfo): number {
    if (READ_ONLY_VERBS.has(info.verb)) return 0;
    const base = { group: info.apiGroup, resource: info.resource, namespace: '', name: '' };
    let n = this.counts.get(keyOf(base)) ?? 0;
    if (info.namespace !== '') {
      n += this.counts.get(keyOf({ ...base, namespace: info.namespace })) ?? 0;
      if (info.name !== '') n += this.counts.get(keyOf({ ...base, namespace: info.namespace, name: info.name })) ?? 0;
    } else if (info.name !== '') {
      n += this.counts.get(keyOf({ ...base, name: info.name })) ?? 0;
    }
    return n;
  }
}
