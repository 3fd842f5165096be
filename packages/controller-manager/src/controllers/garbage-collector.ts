import { group, isConflict, isNotFound, type ApiObject, type OwnerReference } from '@svc/api';
import {
  Reflector,
  ResourceClient,
  listWatcherFor,
  objectKey,
  type Controller,
  type ReflectorSink,
  type RestClient,
} from '@svc/client';
import type { Logger } from '@svc/component-base';
import { jsonEqual } from '@svc/machinery';
import { newController, type ControllerContext, type ControllerDefinition } from '../controller-context.js';
import { discoverResources, type DiscoveredResource } from '../discovery.js';
import { sleep } from '@svc/machinery';

const NAME = 'garbage-collector-controller';
const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';
/** How often discovery runs again to follow resources that appear or go (Kubernetes' GC sync period). */
const RESYNC_MS = 30_000;
/** After a CRD changes, discovery runs again this soon (its types are served within a second). */
const CRD_RESYNC_MS = 1000;
/** Owners known to be absent that are remembered (Kubernetes' absentOwnerCache size). */
const ABSENT_CACHE_SIZE = 500;
/** Tries of a read-then-patch that meets concurrent writers before the item is backed off. */
const CONFLICT_RETRIES = 5;

/** What the graph keeps of one owner reference. */
interface Owner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  block: boolean;
}

/** What the graph keeps of one object: identity, owners, and where its deletion stands. */
interface GraphNode {
  uid: string;
  /** Shared by every node of the resource. */
  resource: DiscoveredResource;
  namespace?: string;
  name: string;
  owners: Owner[];
  /** Being deleted with the `foregroundDeletion` finalizer (Kubernetes' deletingDependents). */
  foreground: boolean;
  /** Being deleted with the `orphan` finalizer. */
  orphaning: boolean;
}

const apiVersionOf = (r: { group: string; version: string }): string =>
  r.group ? `${r.group}/${r.version}` : r.version;

function nodeOf(resource: DiscoveredResource, obj: ApiObject): GraphNode | undefined {
  const m = obj.metadata;
  if (!m.uid) return undefined;
  const deleting = !!m.deletionTimestamp;
  const finalizers = m.finalizers ?? [];
  return {
    uid: m.uid,
    resource,
    namespace: m.namespace || undefined,
    name: m.name ?? '',
    owners: (m.ownerReferences ?? []).map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      uid: o.uid,
      block: o.blockOwnerDeletion === true,
    })),
    foreground: deleting && finalizers.includes(FOREGROUND),
    orphaning: deleting && finalizers.includes(ORPHAN),
  };
}

/** Where the graph's changes send work: uids to the two queues, owners seen deleted to the absent-owner cache. */
interface GraphSinks {
  attemptToDelete(uid: string): void;
  attemptToOrphan(uid: string): void;
  ownerGone(namespace: string, uid: string): void;
}

/**
 * Every observed object by uid, with its owners, and the reverse edges (owner uid →
 * dependent uids, for owners observed or not). Changed only from watch events, one at a
 * time; enqueues what Kubernetes' GraphBuilder enqueues: a dependent whose owner it cannot
 * vouch for, dependents of a deleted owner, an owner whose blocking dependents changed, and
 * an owner that starts foreground deletion or orphaning.
 */
class DependencyGraph {
  readonly nodes = new Map<string, GraphNode>();
  private readonly dependents = new Map<string, Set<string>>();

  constructor(private readonly sinks: GraphSinks) {}

  dependentsOf(uid: string): GraphNode[] {
    return [...(this.dependents.get(uid) ?? [])]
      .map((d) => this.nodes.get(d))
      .filter((n): n is GraphNode => n !== undefined);
  }

  upsert(resource: DiscoveredResource, obj: ApiObject): void {
    const n = nodeOf(resource, obj);
    if (!n) return;
    const old = this.nodes.get(n.uid);
    this.nodes.set(n.uid, n);
    const after = new Map(n.owners.map((o) => [o.uid, o]));
    for (const o of old?.owners ?? []) {
      const now = after.get(o.uid);
      if (!now) this.unlink(o.uid, n.uid);
      if (o.block && !now?.block) this.wakeForegroundOwner(o.uid);
    }
    const before = new Set((old?.owners ?? []).map((o) => o.uid));
    let verify = false;
    for (const o of n.owners) {
      if (before.has(o.uid)) continue;
      let set = this.dependents.get(o.uid);
      if (!set) this.dependents.set(o.uid, (set = new Set()));
      set.add(n.uid);
      if (!this.vouchesFor(o, n)) verify = true;
    }
    if (verify) this.sinks.attemptToDelete(n.uid);
    if (n.orphaning && !old?.orphaning) this.sinks.attemptToOrphan(n.uid);
    if (n.foreground && !old?.foreground) {
      this.sinks.attemptToDelete(n.uid);
      for (const d of this.dependents.get(n.uid) ?? []) this.sinks.attemptToDelete(d);
    }
  }

  remove(uid: string): void {
    const n = this.nodes.get(uid);
    if (!n) return;
    this.nodes.delete(uid);
    for (const o of n.owners) {
      this.unlink(o.uid, uid);
      this.wakeForegroundOwner(o.uid);
    }
    const deps = this.dependents.get(uid);
    if (deps && deps.size > 0) {
      this.sinks.ownerGone(n.resource.namespaced ? (n.namespace ?? '') : '', uid);
      for (const d of deps) this.sinks.attemptToDelete(d);
    }
  }

  /** The owner is observed, matches the reference's coordinates, may own `dependent`, and is not deleting its dependents. */
  private vouchesFor(o: Owner, dependent: GraphNode): boolean {
    const owner = this.nodes.get(o.uid);
    return (
      !!owner &&
      !owner.foreground &&
      owner.name === o.name &&
      owner.resource.kind === o.kind &&
      apiVersionOf(owner.resource) === o.apiVersion &&
      (!owner.resource.namespaced || owner.namespace === dependent.namespace)
    );
  }

  private wakeForegroundOwner(uid: string): void {
    if (this.nodes.get(uid)?.foreground) this.sinks.attemptToDelete(uid);
  }

  private unlink(owner: string, dependent: string): void {
    const set = this.dependents.get(owner);
    set?.delete(dependent);
    if (set?.size === 0) this.dependents.delete(owner);
  }
}

/** Feeds one resource's list and watch into the graph, remembering only key → uid (an informer without a store). */
class Monitor implements ReflectorSink<ApiObject> {
  private readonly uids = new Map<string, string>();
  readonly stop = new AbortController();
  readonly synced: Promise<void>;
  private markSynced: () => void = () => undefined;

  constructor(
    readonly resource: DiscoveredResource,
    private readonly graph: DependencyGraph,
    /** Hears every change (the CRD monitor uses it to follow new resources at once). */
    private readonly onEvent?: () => void,
  ) {
    this.synced = new Promise((resolve) => {
      this.markSynced = resolve;
    });
  }

  replace(items: ApiObject[]): void {
    const seen = new Set<string>();
    for (const o of items) {
      seen.add(objectKey(o));
      this.upsert(o);
    }
    for (const [key, uid] of this.uids) {
      if (seen.has(key)) continue;
      this.uids.delete(key);
      this.graph.remove(uid);
    }
    this.markSynced();
  }

  apply(ev: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: ApiObject }): void {
    this.onEvent?.();
    if (ev.type !== 'DELETED') return this.upsert(ev.object);
    const key = objectKey(ev.object);
    if (this.uids.get(key) === ev.object.metadata.uid) this.uids.delete(key);
    if (ev.object.metadata.uid) this.graph.remove(ev.object.metadata.uid);
  }

  private upsert(o: ApiObject): void {
    const key = objectKey(o);
    const uid = o.metadata.uid ?? '';
    const previous = this.uids.get(key);
    if (previous !== undefined && previous !== uid) this.graph.remove(previous);
    this.uids.set(key, uid);
    this.graph.upsert(this.resource, o);
  }
}

/** A bounded set of `namespace/uid` of owners known to be gone; the oldest entry goes first. */
class AbsentOwnerCache {
  private readonly keys = new Set<string>();
  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > ABSENT_CACHE_SIZE) this.keys.delete(this.keys.values().next().value as string);
  }
  has(key: string): boolean {
    return this.keys.has(key);
  }
}

type OwnerState = 'solid' | 'dangling' | 'waiting' | 'invalid';

/**
 * Kubernetes' garbage collector: monitors every deletable resource found by discovery into a
 * uid graph, and runs two queues over uids with `--concurrent-gc-syncs` workers each.
 * attemptToDelete: an object whose owners are all gone (absent, or present with another uid)
 * is deleted (its own `orphan`/`foregroundDeletion` finalizer chooses the policy, else
 * Background); references to gone owners next to a live one are removed; an owner being
 * deleted in the foreground loses its finalizer once no dependent with blockOwnerDeletion is
 * left. attemptToOrphan: an owner being deleted with `orphan` has its reference removed from
 * each dependent, then the finalizer. Workers start only once every monitor has listed;
 * discovery runs again every 30 s and monitors resources that appeared.
 */
class GarbageCollector {
  private readonly graph: DependencyGraph;
  private readonly absent = new AbsentOwnerCache();
  private readonly monitors = new Map<string, Monitor>();
  private readonly reflectors: Promise<void>[] = [];
  /** `apiVersion/kind` → resource, over every served version. */
  private mapping = new Map<string, DiscoveredResource>();
  private readonly deleter: Controller;
  private readonly orphaner: Controller;
  private readonly client: RestClient;
  private readonly logger: Logger;
  private readonly ignored: Set<string>;

  constructor(ctx: ControllerContext) {
    this.client = ctx.client;
    this.logger = ctx.logger.with({ controller: NAME });
    // As Kubernetes, events are never garbage collected by owner.
    this.ignored = new Set(['/events', `${group('events')}/events`]);
    const workers = ctx.options.concurrentSyncs.gc ?? 20;
    this.deleter = newController(ctx, {
      name: NAME,
      queueName: 'garbage_collector_attempt_to_delete',
      workers,
      reconcile: (uid, signal) => this.attemptToDelete(uid, signal),
    });
    this.orphaner = newController(ctx, {
      name: NAME,
      queueName: 'garbage_collector_attempt_to_orphan',
      workers,
      reconcile: (uid, signal) => this.attemptToOrphan(uid, signal),
    });
    this.graph = new DependencyGraph({
      attemptToDelete: (uid) => this.deleter.enqueue(uid),
      attemptToOrphan: (uid) => this.orphaner.enqueue(uid),
      ownerGone: (namespace, uid) => this.absent.add(`${namespace}/${uid}`),
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    // One listener stops every monitor, including those started later (sync checks `aborted`).
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener(
        'abort',
        () => {
          for (const m of this.monitors.values()) m.stop.abort();
          resolve();
        },
        { once: true },
      ),
    );
    for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, RESYNC_MS)) {
      try {
        await this.sync(signal);
        break;
      } catch (e) {
        if (!signal.aborted) this.logger.warn('discovery failed, retrying', { error: String(e), delayMs: delay });
        await sleep(delay, signal);
      }
    }
    await Promise.race([Promise.all([...this.monitors.values()].map((m) => m.synced)), aborted]);
    if (!signal.aborted)
      this.logger.info('all resource monitors have synced; proceeding to collect garbage', {
        resources: this.monitors.size,
      });
    await Promise.all([this.deleter.run(signal), this.orphaner.run(signal), this.resyncLoop(signal)]);
    await Promise.all(this.reflectors);
  }

  private soon?: NodeJS.Timeout;

  /**
   * A CRD changed: run discovery again in a second instead of at the next 30 s tick, so custom
   * resources are monitored as soon as they are served (and dropped when they go).
   */
  private resyncSoon(signal: AbortSignal): void {
    if (this.soon || signal.aborted) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      if (signal.aborted) return;
      this.sync(signal).catch((e: unknown) => {
        if (!signal.aborted) this.logger.warn('discovery failed; keeping the current monitors', { error: String(e) });
      });
    }, CRD_RESYNC_MS);
    this.soon.unref();
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(RESYNC_MS, signal);
      if (signal.aborted) return;
      try {
        await this.sync(signal);
      } catch (e) {
        if (!signal.aborted) this.logger.warn('discovery failed; keeping the current monitors', { error: String(e) });
      }
    }
  }

  /** Refreshes the kind mapping and starts a monitor for every deletable resource not yet monitored; stops those no longer served. */
  private async sync(signal: AbortSignal): Promise<void> {
    const all = await discoverResources(this.client, { allVersions: true, signal });
    const mapping = new Map<string, DiscoveredResource>();
    for (const r of all)
      if (!mapping.has(`${apiVersionOf(r)}/${r.kind}`)) mapping.set(`${apiVersionOf(r)}/${r.kind}`, r);
    this.mapping = mapping;
    const wanted = all.filter(
      (r) =>
        r.preferred &&
        ['list', 'watch', 'delete'].every((v) => r.verbs.includes(v)) &&
        !this.ignored.has(`${r.group}/${r.resource}`),
    );
    const keys = new Set(wanted.map((r) => `${r.group}/${r.resource}`));
    for (const [key, m] of this.monitors) {
      if (keys.has(key)) continue;
      m.stop.abort();
      this.monitors.delete(key);
    }
    for (const r of wanted) {
      const key = `${r.group}/${r.resource}`;
      if (this.monitors.has(key)) continue;
      const crds = r.group === group('apiextensions') && r.resource === 'customresourcedefinitions';
      const m = new Monitor(r, this.graph, crds ? () => this.resyncSoon(signal) : undefined);
      this.monitors.set(key, m);
      if (signal.aborted) m.stop.abort();
      this.reflectors.push(
        new Reflector(listWatcherFor(this.client, r), m, { logger: this.logger }).run(m.stop.signal),
      );
    }
  }

  private api(n: GraphNode): ResourceClient {
    return new ResourceClient(this.client, n.resource, n.resource.namespaced ? n.namespace : undefined);
  }

  /** The object `n` stands for as the server has it now; undefined when gone or replaced by another uid. */
  private async latest(n: GraphNode, signal: AbortSignal): Promise<ApiObject | undefined> {
    const o = await this.api(n).find(n.name, { signal });
    return o?.metadata.uid === n.uid ? o : undefined;
  }

  private async attemptToDelete(uid: string, signal: AbortSignal): Promise<void> {
    const n = this.graph.nodes.get(uid);
    if (!n) return;
    const latest = await this.latest(n, signal);
    if (!latest) return;
    const m = latest.metadata;
    const finalizers = m.finalizers ?? [];
    if (m.deletionTimestamp && finalizers.includes(FOREGROUND)) return this.processDeletingDependents(n, signal);
    if (m.deletionTimestamp) return;
    const refs = m.ownerReferences ?? [];
    if (refs.length === 0) return;
    const by: Record<OwnerState, OwnerReference[]> = { solid: [], dangling: [], waiting: [], invalid: [] };
    for (const ref of refs) by[await this.ownerState(ref, n, signal)].push(ref);
    if (by.invalid.length > 0) {
      // As Kubernetes: a cluster-scoped object cannot have a namespaced owner; nothing to do until its references change.
      this.logger.v(2).info('cluster-scoped object refers to a namespaced owner; ignoring it', { uid, name: n.name });
      return;
    }
    if (by.solid.length > 0) {
      if (by.dangling.length === 0 && by.waiting.length === 0) return;
      const drop = new Set([...by.dangling, ...by.waiting].map((r) => r.uid));
      this.logger
        .v(2)
        .info('removing references to gone or foreground-deleting owners', { uid, name: n.name, owners: [...drop] });
      await this.editOwnerReferences(n, (rs) => rs.filter((r) => !drop.has(r.uid)), signal);
      return;
    }
    if (by.waiting.length > 0 && this.graph.dependentsOf(uid).length > 0) {
      // Its owner waits for it and it has dependents: delete it in the foreground too. A
      // dependent already doing the same could wait on it in a cycle, so stop blocking first.
      if (this.graph.dependentsOf(uid).some((d) => d.foreground)) {
        await this.editOwnerReferences(
          n,
          (rs) => rs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)),
          signal,
        );
      }
      return this.deleteObject(n, { latest, policy: 'Foreground', signal });
    }
    const policy = finalizers.includes(ORPHAN)
      ? 'Orphan'
      : finalizers.includes(FOREGROUND)
        ? 'Foreground'
        : 'Background';
    return this.deleteObject(n, { latest, policy, signal });
  }

  /** Whether `ref` (a reference of `n`) names a live owner, a gone one, or one deleting its dependents; asks the server. */
  private async ownerState(ref: OwnerReference, n: GraphNode, signal: AbortSignal): Promise<OwnerState> {
    if (this.absent.has(`/${ref.uid}`) || this.absent.has(`${n.namespace ?? ''}/${ref.uid}`)) return 'dangling';
    const r = this.mapping.get(`${ref.apiVersion}/${ref.kind}`);
    if (!r) throw new Error(`no served resource has kind ${ref.kind} in ${ref.apiVersion} (yet)`);
    if (r.namespaced && !n.namespace) return 'invalid';
    const namespace = r.namespaced ? n.namespace : undefined;
    const cacheKey = `${namespace ?? ''}/${ref.uid}`;
    let owner: ApiObject;
    try {
      owner = await new ResourceClient(this.client, r, namespace).get(ref.name, { signal });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.absent.add(cacheKey);
      return 'dangling';
    }
    if (owner.metadata.uid !== ref.uid) {
      this.absent.add(cacheKey);
      return 'dangling';
    }
    return owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND)
      ? 'waiting'
      : 'solid';
  }

  /**
   * Deletes `n` as it was judged (`latest`): the resourceVersion is a precondition; when it
   * changed but its owners did not, the delete is repeated with only the uid as precondition.
   */
  private async deleteObject(
    n: GraphNode,
    {
      latest,
      policy,
      signal,
    }: { latest: ApiObject; policy: 'Background' | 'Foreground' | 'Orphan'; signal: AbortSignal },
  ): Promise<void> {
    this.logger.v(2).info('deleting object whose owners are gone', {
      uid: n.uid,
      resource: n.resource.resource,
      namespace: n.namespace,
      name: n.name,
      propagationPolicy: policy,
    });
    const del = async (resourceVersion?: string): Promise<void> => {
      try {
        await this.api(n).delete(n.name, {
          propagationPolicy: policy,
          preconditions: { uid: n.uid, resourceVersion },
          signal,
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    };
    try {
      await del(latest.metadata.resourceVersion);
    } catch (e) {
      if (!isConflict(e)) throw e;
      const live = await this.latest(n, signal);
      if (!live) return;
      if (!jsonEqual(live.metadata.ownerReferences ?? [], latest.metadata.ownerReferences ?? []))
        throw new Error(`owners of ${n.name} changed; judging it again`, { cause: e });
      await del();
    }
  }

  /** An owner deleting in the foreground: its finalizer goes once no dependent blocks it; blocking dependents are (re)queued. */
  private async processDeletingDependents(n: GraphNode, signal: AbortSignal): Promise<void> {
    const blocking = this.graph.dependentsOf(n.uid).filter((d) => d.owners.some((o) => o.uid === n.uid && o.block));
    if (blocking.length === 0) return this.removeFinalizer(n, FOREGROUND, signal);
    for (const d of blocking) if (!d.foreground) this.deleter.enqueue(d.uid);
  }

  private async attemptToOrphan(uid: string, signal: AbortSignal): Promise<void> {
    const n = this.graph.nodes.get(uid);
    if (!n) return;
    const latest = await this.latest(n, signal);
    if (!latest?.metadata.deletionTimestamp || !(latest.metadata.finalizers ?? []).includes(ORPHAN)) return;
    await Promise.all(
      this.graph
        .dependentsOf(uid)
        .map((d) => this.editOwnerReferences(d, (rs) => rs.filter((r) => r.uid !== uid), signal)),
    );
    await this.removeFinalizer(n, ORPHAN, signal);
  }

  private editOwnerReferences(
    n: GraphNode,
    edit: (refs: OwnerReference[]) => OwnerReference[],
    signal: AbortSignal,
  ): Promise<void> {
    return this.patchMetadata(
      n,
      (m) => {
        const refs = m.ownerReferences ?? [];
        const next = edit(refs);
        return jsonEqual(next, refs) ? undefined : { ownerReferences: next.length > 0 ? next : null };
      },
      signal,
    );
  }

  private removeFinalizer(n: GraphNode, finalizer: string, signal: AbortSignal): Promise<void> {
    this.logger.v(2).info('removing finalizer', { uid: n.uid, name: n.name, finalizer });
    return this.patchMetadata(
      n,
      (m) => {
        const finalizers = m.finalizers ?? [];
        if (!finalizers.includes(finalizer)) return undefined;
        const next = finalizers.filter((f) => f !== finalizer);
        return { finalizers: next.length > 0 ? next : null };
      },
      signal,
    );
  }

  /**
   * Reads `n` and merge-patches the metadata `change` computes from it (nothing when it answers
   * undefined), with the read resourceVersion as precondition; retried on conflict.
   */
  private async patchMetadata(
    n: GraphNode,
    change: (m: ApiObject['metadata']) => Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    for (let i = 0; ; i++) {
      const latest = await this.latest(n, signal);
      if (!latest) return;
      const patch = change(latest.metadata);
      if (!patch) return;
      try {
        await this.api(n).patch(
          n.name,
          { metadata: { ...patch, resourceVersion: latest.metadata.resourceVersion } },
          { type: 'merge', signal },
        );
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || i + 1 >= CONFLICT_RETRIES) throw e;
      }
    }
  }
}

/** `garbage-collector-controller` (run only with `--enable-garbage-collector`): see `GarbageCollector`. */
export const garbageCollectorController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const gc = new GarbageCollector(ctx);
    return { run: (signal) => gc.run(signal) };
  },
};
