import { isNotFound, type ApiObject, type Pod, type ResourceQuota } from '@svc/api';
import { NAMESPACE_INDEX, ResourceClient, type Informer } from '@svc/client';
import {
  calculateQuotaUsage,
  canonicalQuantity,
  podCountsForQuota,
  quantitiesEqual,
  quantitiesOf,
  quotaEvaluatorFor,
  trackedGroupResources,
} from '@svc/machinery';
import { informer, newController, type ControllerContext, type ControllerDefinition } from '../controller-context.js';
import { discoverResources, type DiscoveredResource } from '../discovery.js';
import { R } from '../resources.js';

const NAME = 'resourcequota-controller';
/** How often discovery may be asked again for a kind a quota counts but the server did not serve (Kubernetes re-syncs its monitors every 30 s). */
const DISCOVERY_INTERVAL_MS = 30_000;
/** When a counted kind's objects are not listed yet, the quota is looked at again this soon. */
const NOT_SYNCED_RETRY_MS = 1000;

type GroupResource = { group: string; resource: string };
const grKey = (gr: GroupResource): string => `${gr.resource}.${gr.group}`;

/** A service's type as quota sees it (Kubernetes' GetQuotaServiceType): NodePort, LoadBalancer, or other. */
function quotaServiceType(o: ApiObject): string {
  const t = (o.spec as { type?: string } | undefined)?.type;
  return t === 'NodePort' || t === 'LoadBalancer' ? t : '';
}

function claimStorage(o: ApiObject): string {
  const c = o as {
    spec?: { resources?: { requests?: Record<string, string> } };
    status?: { allocatedResources?: Record<string, string> };
  };
  return `${c.spec?.resources?.requests?.storage ?? ''}|${c.status?.allocatedResources?.storage ?? ''}`;
}

/**
 * Whether an update of an object can change what it uses (Kubernetes' DefaultUpdateFilter): a
 * pod turning terminal, a service changing type, a claim's storage changing. Creates are charged
 * by admission; deletes always replenish.
 */
function usageMayChange(gr: GroupResource, c: { before: ApiObject; after: ApiObject; now: number }): boolean {
  const { before, after, now } = c;
  if (gr.group !== '') return false;
  switch (gr.resource) {
    case 'pods':
      return podCountsForQuota(before as Pod, now) && !podCountsForQuota(after as Pod, now);
    case 'services':
      return quotaServiceType(before) !== quotaServiceType(after);
    case 'persistentvolumeclaims':
      return claimStorage(before) !== claimStorage(after);
    default:
      return false;
  }
}

/**
 * Kubernetes' resource quota controller: keeps each ResourceQuota's `status.hard` equal to its
 * `spec.hard` and `status.used` equal to what the namespace's objects use (pods and claims by
 * their requests and limits, services by type, any kind by `count/<resource>.<group>`), over
 * informers. A quota is synced when it is created or its hard limits change, when an object it
 * counts is deleted (or stops counting: a pod turning terminal), and every
 * `--resource-quota-sync-period` (5m0s). Kinds named only by `count/...` are watched from the
 * first quota naming them (found by discovery). `status` is written with the quota's
 * resourceVersion, so a conflicting charge by admission makes the sync run again.
 */
class ResourceQuotaController {
  private readonly quotas: Informer<ResourceQuota>;
  private readonly monitors = new Map<string, Informer<ApiObject>>();
  private readonly api: ResourceClient<ResourceQuota>;
  private readonly controller: ReturnType<typeof newController>;
  private discovered = new Map<string, DiscoveredResource>();
  private discoveredAt = 0;
  private signal?: AbortSignal;

  constructor(private readonly ctx: ControllerContext) {
    this.quotas = informer<ResourceQuota>(ctx, R.resourceQuotas());
    this.api = new ResourceClient<ResourceQuota>(ctx.client, R.resourceQuotas());
    this.controller = newController(ctx, {
      name: NAME,
      queueName: 'resourcequota_primary',
      workers: ctx.options.concurrentSyncs['resource-quota'],
      reconcile: (key, signal) => this.sync(key, signal),
    });
    this.quotas.addEventHandler({
      onAdd: (q) => this.enqueue(q),
      onUpdate: (before, after) => {
        if (!quantitiesEqual(quantitiesOf(before.spec?.hard), quantitiesOf(after.spec?.hard))) this.enqueue(after);
      },
      onDelete: (q) => this.enqueue(q),
    });
    this.controller.watch(this.quotas, () => []);
    for (const gvr of [R.pods(), R.services(), R.configMaps(), R.secrets()]) {
      const inf = informer(ctx, gvr);
      this.monitor({ group: gvr.group, resource: gvr.resource }, inf);
      this.controller.watch(inf, () => []);
    }
  }

  private enqueue(q: ResourceQuota): void {
    this.controller.enqueue(`${q.metadata.namespace ?? ''}/${q.metadata.name ?? ''}`);
  }

  /** Replenishes on deletes and usage-changing updates of one kind's objects. */
  private monitor(gr: GroupResource, inf: Informer<ApiObject>): void {
    this.monitors.set(grKey(gr), inf);
    inf.addEventHandler({
      onUpdate: (before, after) => {
        if (before !== after && usageMayChange(gr, { before, after, now: Date.now() }))
          this.replenish(gr, after.metadata.namespace);
      },
      onDelete: (o) => this.replenish(gr, o.metadata.namespace),
    });
  }

  /** Every quota of the namespace that counts the kind. */
  private replenish(gr: GroupResource, namespace: string | undefined): void {
    const e = quotaEvaluatorFor(gr.group, gr.resource);
    for (const q of this.quotas.store.byIndex(NAMESPACE_INDEX, namespace ?? '')) {
      if (e.matchingResources(Object.keys(q.status?.hard ?? {})).length > 0) this.enqueue(q);
    }
  }

  /** The informer of a counted kind, started at first need; undefined while the server does not serve it. */
  private async monitorFor(gr: GroupResource, signal: AbortSignal): Promise<Informer<ApiObject> | undefined> {
    const known = this.monitors.get(grKey(gr));
    if (known) return known;
    let r = this.discovered.get(grKey(gr));
    if (!r && Date.now() - this.discoveredAt > DISCOVERY_INTERVAL_MS) {
      this.discoveredAt = Date.now();
      const all = await discoverResources(this.ctx.client, { signal });
      this.discovered = new Map(
        all.filter((d) => d.preferred && d.namespaced && d.verbs.includes('list')).map((d) => [grKey(d), d]),
      );
      r = this.discovered.get(grKey(gr));
    }
    if (!r) return undefined;
    const inf = this.ctx.informers.informerFor<ApiObject>({ group: r.group, version: r.version, resource: r.resource });
    this.monitor(gr, inf);
    if (this.signal) inf.run(this.signal).catch(() => undefined);
    return inf;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const resync = setInterval(() => {
      for (const q of this.quotas.store.list()) this.enqueue(q);
    }, this.ctx.options.resourceQuotaSyncPeriodMs);
    resync.unref();
    try {
      await this.controller.run(signal);
    } finally {
      clearInterval(resync);
    }
  }

  /** Kubernetes' syncResourceQuota: recount, and write the status when it changed. */
  private async sync(key: string, signal: AbortSignal): Promise<{ requeueAfter: number } | undefined> {
    const q = this.quotas.store.get(key);
    if (!q) return undefined;
    const hardNames = Object.keys(q.spec?.hard ?? {});
    const namespace = q.metadata.namespace ?? '';
    const lists = new Map<string, ApiObject[] | undefined>();
    let notServed = false;
    let notSynced = false;
    for (const gr of trackedGroupResources(hardNames)) {
      const inf = await this.monitorFor(gr, signal);
      if (!inf) notServed = true;
      else if (!inf.hasSynced()) notSynced = true;
      else lists.set(grKey(gr), inf.store.byIndex(NAMESPACE_INDEX, namespace));
    }
    const { used: counted } = calculateQuotaUsage(q, {
      objectsOf: (group, resource) => lists.get(grKey({ group, resource })),
      now: Date.now(),
    });
    const used = new Map(quantitiesOf(q.status?.used));
    for (const [k, v] of counted) used.set(k, v);
    for (const k of [...used.keys()]) if (!hardNames.includes(k)) used.delete(k);
    const hard = Object.fromEntries(Object.entries(q.spec?.hard ?? {}).map(([k, v]) => [k, canonicalQuantity(v)]));
    const dirty =
      !q.status?.hard ||
      !q.status.used ||
      !quantitiesEqual(quantitiesOf(q.spec?.hard), quantitiesOf(q.status.hard)) ||
      !quantitiesEqual(used, quantitiesOf(q.status.used));
    if (dirty) {
      const status = { hard, used: Object.fromEntries([...used].map(([k, v]) => [k, v.toString()])) };
      try {
        await this.api.namespace(namespace).update({ ...q, status }, { subresource: 'status', signal });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    }
    if (notSynced) return { requeueAfter: NOT_SYNCED_RETRY_MS };
    return notServed ? { requeueAfter: DISCOVERY_INTERVAL_MS } : undefined;
  }
}

export const resourceQuotaController: ControllerDefinition = {
  name: NAME,
  build: (ctx) => new ResourceQuotaController(ctx),
};
