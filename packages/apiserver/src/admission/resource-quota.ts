import {
  group,
  groupSpellings,
  isConflict,
  isNotFound,
  naming,
  type ApiObject,
  type ResourceQuota,
  StatusError,
} from '@svc/api';
import {
  checkQuotaRequest,
  quantitiesEqual,
  quantitiesOf,
  quotaEvaluatorFor,
  QuotaRejection,
  type LimitedResource,
  type QuotaEvaluator,
} from '@svc/machinery';
import { ConfigurationError } from '../options.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';
import { StoreLister } from './store-lister.js';

/** Tries of the status update per request: the first and two more after conflicts (Kubernetes' 3 retries). */
const UPDATE_RETRIES = 3;

export interface QuotaAccessor {
  /** The quotas of a namespace from the cache. */
  cached(namespace: string): Promise<ResourceQuota[]>;
  /** One quota straight from storage; undefined once it is gone. */
  fresh(namespace: string, name: string): Promise<ResourceQuota | undefined>;
  /** Writes `status` with `metadata.resourceVersion` as the precondition; throws a Conflict when it moved. */
  updateStatus(q: ResourceQuota): Promise<ResourceQuota>;
}

export interface ResourceQuotaOptions extends QuotaAccessor {
  /** `limitedResources` of the plugin's configuration. */
  limited?: readonly LimitedResource[];
  now?: () => number;
}

/** Objects that are never counted: virtual ones (reviews, bindings) and Events (Kubernetes' ignored resources). */
function ignored(a: AdmissionAttributes): boolean {
  const r = a.resource;
  if (r.virtual) return true;
  if (r.group === '' && (r.plural === 'bindings' || r.plural === 'componentstatuses' || r.plural === 'events'))
    return true;
  return r.group === group('events') && r.plural === 'events';
}

/** A plain error as Kubernetes answers it (500 without a reason: kubectl prints `Error from server: <text>`). */
function plainError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

function key(q: ResourceQuota): string {
  return `${q.metadata.namespace ?? ''}/${q.metadata.name ?? ''}`;
}

/**
 * Kubernetes' ResourceQuota admission (validating phase): a namespaced write that changes what a
 * kind uses (pods and claims by their requests and limits, services by type, every kind's
 * object count) is checked against every quota of the namespace that tracks it, and refused
 * with Kubernetes' 403s (`exceeded quota: <name>, requested: ..., used: ..., limited: ...`,
 * `failed quota: <name>: must specify ...`, `status unknown for quota: ...`). An admitted
 * request is charged at once: the new `status.used` is written with the quota's
 * resourceVersion as precondition, so concurrent requests (here or on another server) cannot
 * both take the last unit; on a conflict the quota is read again and the request checked
 * again (three tries). Requests of one namespace are checked one at a time on this server.
 * Dry runs are checked but not charged.
 */
export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  /** Quotas this server wrote last (Kubernetes' look-aside cache: the informer may not have them yet). */
  private readonly updated = new Map<string, ResourceQuota>();
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly o: ResourceQuotaOptions) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || !a.resource.namespaced || ignored(a) || !a.object) return;
    const e = quotaEvaluatorFor(a.resource.group, a.resource.plural);
    if (!e.handles(a.operation, a.subresource)) return;
    if ((this.o.limited ?? []).length === 0 && (await this.o.cached(a.namespace)).length === 0) return;
    await this.serialized(a.namespace, async () => {
      const quotas = await this.quotas(a.namespace);
      if (quotas.length === 0 && (this.o.limited ?? []).length === 0) return;
      await this.check(a, { evaluator: e, quotas, retries: UPDATE_RETRIES });
    });
  }

  /** Runs `f` after the namespace's earlier checks have finished. */
  private async serialized(namespace: string, f: () => Promise<void>): Promise<void> {
    const before = this.queues.get(namespace) ?? Promise.resolve();
    const run = before.then(f, f);
    const tail = run.catch(() => undefined);
    this.queues.set(namespace, tail);
    try {
      await run;
    } finally {
      if (this.queues.get(namespace) === tail) this.queues.delete(namespace);
    }
  }

  /** The cache's quotas, each replaced by the one this server wrote when that is newer. */
  private async quotas(namespace: string): Promise<ResourceQuota[]> {
    return (await this.o.cached(namespace)).map((q) => {
      const mine = this.updated.get(key(q));
      if (!mine) return structuredClone(q);
      if (Number(q.metadata.resourceVersion ?? 0) >= Number(mine.metadata.resourceVersion ?? 0)) {
        this.updated.delete(key(q));
        return structuredClone(q);
      }
      return structuredClone(mine);
    });
  }

  private async check(
    a: AdmissionAttributes,
    s: { evaluator: QuotaEvaluator; quotas: ResourceQuota[]; retries: number },
  ): Promise<void> {
    let next: ResourceQuota[];
    try {
      next = checkQuotaRequest(s.quotas, s.evaluator, {
        operation: a.operation,
        subresource: a.subresource,
        object: a.object as ApiObject,
        oldObject: a.oldObject,
        now: this.o.now?.() ?? Date.now(),
        limited: this.o.limited,
      });
    } catch (err) {
      if (err instanceof QuotaRejection)
        throw err.forbidden ? admissionForbidden(a, err.message) : plainError(err.message);
      throw err;
    }
    if (a.dryRun) return;
    const changed = next.filter(
      (q, i) => !quantitiesEqual(quantitiesOf(q.status?.used), quantitiesOf(s.quotas[i]?.status?.used)),
    );
    const failed: ResourceQuota[] = [];
    let lastError: unknown;
    for (const q of changed) {
      try {
        const written = await this.o.updateStatus(q);
        this.updated.set(key(written), written);
      } catch (err) {
        if (isNotFound(err)) continue;
        failed.push(q);
        lastError = err;
      }
    }
    if (failed.length === 0) return;
    if (s.retries <= 1 || !isConflict(lastError)) throw lastError;
    const fresh: ResourceQuota[] = [];
    for (const q of failed) {
      const now = await this.o.fresh(q.metadata.namespace ?? '', q.metadata.name ?? '');
      if (now) fresh.push(now);
    }
    await this.check(a, { evaluator: s.evaluator, quotas: fresh, retries: s.retries - 1 });
  }
}

/** `limitedResources` of a ResourceQuotaConfiguration (`apiserver.config.<suffix>/v1`, or `resourcequota.admission.<suffix>/v1beta1`). */
export function parseResourceQuotaConfig(config: unknown): LimitedResource[] {
  if (config === undefined || config === null) return [];
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: ResourceQuota: ${why}`);
  };
  if (typeof config !== 'object' || Array.isArray(config)) return fail('not an object');
  const { apiVersion, kind, limitedResources } = config as Record<string, unknown>;
  const versions = [
    ...groupSpellings(group('apiserver.config')).map((g) => `${g}/v1`),
    ...groupSpellings(group('resourcequota.admission')).flatMap((g) => [`${g}/v1beta1`, `${g}/v1alpha1`]),
  ];
  if (kind !== 'ResourceQuotaConfiguration' || typeof apiVersion !== 'string' || !versions.includes(apiVersion)) {
    return fail(`expected kind ResourceQuotaConfiguration in ${versions.join(' or ')}`);
  }
  if (limitedResources === undefined || limitedResources === null) return [];
  if (!Array.isArray(limitedResources)) return fail('limitedResources must be a list');
  return limitedResources.map((l: unknown, i) => {
    const r = (l ?? {}) as Record<string, unknown>;
    if (typeof r.resource !== 'string' || r.resource === '') return fail(`limitedResources[${i}].resource is required`);
    return {
      apiGroup: typeof r.apiGroup === 'string' ? r.apiGroup : '',
      resource: r.resource,
      matchContains: Array.isArray(r.matchContains) ? r.matchContains.map(String) : [],
      matchScopes: Array.isArray(r.matchScopes) ? (r.matchScopes as LimitedResource['matchScopes']) : [],
    };
  });
}

/** ResourceQuota admission over the server's quotas: an informer over the watch cache, status writes through the store. */
export function newResourceQuotaAdmission(c: AdmissionContext): ResourceQuotaAdmission {
  const type = (): ReturnType<AdmissionContext['catalog']['lookup']> => c.catalog.lookup('', 'v1', 'resourcequotas');
  const store = (): ReturnType<AdmissionContext['storeFor']> => {
    const t = type();
    if (!t) throw new Error('resourcequotas are not served');
    return c.storeFor(t);
  };
  const lister = new StoreLister<ResourceQuota>({
    store: () => (type() ? store() : undefined),
    signal: c.signal,
    onError: (e) => c.log.warn('ResourceQuota informer failed; relisting', { error: (e as Error).message }),
  });
  return new ResourceQuotaAdmission({
    limited: parseResourceQuotaConfig(c.config('ResourceQuota')),
    cached: (ns) => lister.list(ns),
    fresh: async (ns, name) => {
      try {
        return (await store().get(ns, name)) as ResourceQuota;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    updateStatus: async (q) => {
      const expected = q.metadata.resourceVersion;
      const { object } = await store().update(q.metadata.namespace ?? '', q.metadata.name ?? '', {
        ctx: { fieldManager: naming().apiserverName },
        subresource: 'status',
        updater: (current) => ({
          ...current,
          metadata: { ...current.metadata, resourceVersion: expected },
          status: q.status,
        }),
      });
      return object as ResourceQuota;
    },
  });
}
