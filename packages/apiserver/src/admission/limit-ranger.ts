import {
  limitRangerAnnotation,
  type ApiObject,
  type Container,
  type LimitRange,
  type LimitRangeItem,
  type Pod,
  type ResourceList,
} from '@svc/api';
import {
  Quantity,
  defaultRequestsFromLimits,
  podLimits,
  podRequests,
  quantitiesOf,
  type Quantities,
} from '@svc/machinery';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';
import { StoreLister } from './store-lister.js';

/** How long a live lookup of a namespace without LimitRanges in the cache is reused (Kubernetes: 30 s). */
const LIVE_LOOKUP_TTL_MS = 30_000;
/** Kubernetes' MaxMilliValue: beyond it, values are compared in whole units. */
const MAX_MILLI_VALUE = 9223372036854775807n / 1000n;

export interface LimitRangerOptions {
  /** The LimitRanges of a namespace from the cache (empty when none is known yet). */
  cached(namespace: string): Promise<LimitRange[]>;
  /** The LimitRanges of a namespace from storage (the cache may lag behind a new one). */
  live(namespace: string): Promise<LimitRange[]>;
}

/** Go's `%f`. */
function goFloat(n: number): string {
  return Number.isFinite(n) ? n.toFixed(6) : n > 0 ? '+Inf' : 'NaN';
}

/** request, limit and enforced in milli-units when they all fit, else in whole units (Kubernetes' requestLimitEnforcedValues). */
function comparable(
  req: Quantity | undefined,
  lim: Quantity | undefined,
  enforced: Quantity,
): [bigint, bigint, bigint] {
  const zero = Quantity.zero();
  const r = req ?? zero;
  const l = lim ?? zero;
  if (r.value() <= MAX_MILLI_VALUE && l.value() <= MAX_MILLI_VALUE && enforced.value() <= MAX_MILLI_VALUE) {
    return [r.milliValue(), l.milliValue(), enforced.milliValue()];
  }
  return [r.value(), l.value(), enforced.value()];
}

function minConstraint(
  c: { type: string; resource: string; enforced: Quantity },
  requests: Quantities,
  limits: Quantities,
): string | undefined {
  const req = requests.get(c.resource);
  const lim = limits.get(c.resource);
  const [r, l, e] = comparable(req, lim, c.enforced);
  const head = `minimum ${c.resource} usage per ${c.type} is ${c.enforced.toString()}`;
  if (!req) return `${head}.  No request is specified`;
  if (r < e) return `${head}, but request is ${req.toString()}`;
  if (lim && l < e) return `${head}, but limit is ${lim.toString()}`;
  return undefined;
}

function maxConstraint(
  c: { type: string; resource: string; enforced: Quantity },
  requests: Quantities,
  limits: Quantities,
): string | undefined {
  const req = requests.get(c.resource);
  const lim = limits.get(c.resource);
  const [r, l, e] = comparable(req, lim, c.enforced);
  const head = `maximum ${c.resource} usage per ${c.type} is ${c.enforced.toString()}`;
  if (!lim) return `${head}.  No limit is specified`;
  if (l > e) return `${head}, but limit is ${lim.toString()}`;
  if (req && r > e) return `${head}, but request is ${req.toString()}`;
  return undefined;
}

/** The max of a claim's request (claims have no limits that count). */
function maxRequestConstraint(
  c: { type: string; resource: string; enforced: Quantity },
  requests: Quantities,
): string | undefined {
  const req = requests.get(c.resource);
  const [r, , e] = comparable(req, undefined, c.enforced);
  const head = `maximum ${c.resource} usage per ${c.type} is ${c.enforced.toString()}`;
  if (!req) return `${head}.  No request is specified`;
  if (r > e) return `${head}, but request is ${req.toString()}`;
  return undefined;
}

function ratioConstraint(
  c: { type: string; resource: string; enforced: Quantity },
  requests: Quantities,
  limits: Quantities,
): string | undefined {
  const req = requests.get(c.resource);
  const lim = limits.get(c.resource);
  const [r, l] = comparable(req, lim, c.enforced);
  const head = `${c.resource} max limit to request ratio per ${c.type} is ${c.enforced.toString()}`;
  if (!req || r === 0n) return `${head}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${head}, but no limit is specified or limit is 0`;
  const shown = Number(l) / Number(r);
  let observed = shown;
  let max = Number(c.enforced.value());
  if (c.enforced.value() <= MAX_MILLI_VALUE) {
    observed *= 1000;
    max = Number(c.enforced.milliValue());
  }
  return observed > max ? `${head}, but provided ratio is ${goFloat(shown)}` : undefined;
}

/** Min, max and ratio of one item against one set of requests and limits. */
function checkItem(item: LimitRangeItem, requests: Quantities, limits: Quantities): string[] {
  const errs: string[] = [];
  const each = (list: ResourceList | undefined, f: typeof minConstraint): void => {
    for (const [resource, enforced] of quantitiesOf(list)) {
      const e = f({ type: item.type, resource, enforced }, requests, limits);
      if (e) errs.push(e);
    }
  };
  each(item.min, minConstraint);
  each(item.max, maxConstraint);
  each(item.maxLimitRequestRatio, ratioConstraint);
  return errs;
}

/** Kubernetes' aggregate error text: one message as is, several (distinct) in brackets. */
function aggregate(errs: readonly string[]): string {
  const distinct = [...new Set(errs)];
  return distinct.length === 1 ? (distinct[0] ?? '') : `[${distinct.join(', ')}]`;
}

function podValidationErrors(lr: LimitRange, pod: Pod): string[] {
  const errs: string[] = [];
  const spec = pod.spec;
  for (const item of lr.spec?.limits ?? []) {
    if (item.type === 'Container') {
      for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
        errs.push(...checkItem(item, quantitiesOf(c.resources?.requests), quantitiesOf(c.resources?.limits)));
      }
    }
    if (item.type === 'Pod') {
      errs.push(
        ...checkItem(item, podRequests(spec, { excludeOverhead: true }), podLimits(spec, { excludeOverhead: true })),
      );
    }
  }
  return errs;
}

function claimValidationErrors(lr: LimitRange, claim: ApiObject): string[] {
  const errs: string[] = [];
  const spec = claim.spec as { resources?: { requests?: ResourceList } } | undefined;
  const requests = quantitiesOf(spec?.resources?.requests);
  for (const item of lr.spec?.limits ?? []) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [resource, enforced] of quantitiesOf(item.min)) {
      const e = minConstraint({ type: item.type, resource, enforced }, requests, new Map());
      if (e) errs.push(e);
    }
    for (const [resource, enforced] of quantitiesOf(item.max)) {
      const e = maxRequestConstraint({ type: item.type, resource, enforced }, requests);
      if (e) errs.push(e);
    }
  }
  return errs;
}

/** Gives a container the defaults it lacks; returns the annotation parts (requests, then limits). */
function mergeContainer(c: Container, d: { requests: ResourceList; limits: ResourceList }, what: string): string[] {
  const limits = { ...c.resources?.limits };
  const requests = { ...c.resources?.requests };
  const setLimits = Object.keys(d.limits).filter((k) => limits[k] === undefined);
  const setRequests = Object.keys(d.requests).filter((k) => requests[k] === undefined);
  for (const k of setLimits) limits[k] = d.limits[k] ?? '';
  for (const k of setRequests) requests[k] = d.requests[k] ?? '';
  if (setLimits.length > 0 || setRequests.length > 0) {
    c.resources = { ...c.resources };
    if (Object.keys(limits).length > 0) c.resources.limits = limits;
    if (Object.keys(requests).length > 0) c.resources.requests = requests;
  }
  const notes: string[] = [];
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${c.name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${c.name}`);
  return notes;
}

/** The defaults of a LimitRange's Container items into the pod's containers, noted in the limit-ranger annotation. */
function defaultPod(lr: LimitRange, pod: Pod): void {
  const d = { requests: {} as ResourceList, limits: {} as ResourceList };
  for (const item of lr.spec?.limits ?? []) {
    if (item.type !== 'Container') continue;
    Object.assign(d.requests, item.defaultRequest);
    Object.assign(d.limits, item.default);
  }
  const notes = [
    ...(pod.spec.containers ?? []).flatMap((c) => mergeContainer(c, d, 'container')),
    ...(pod.spec.initContainers ?? []).flatMap((c) => mergeContainer(c, d, 'init container')),
  ];
  if (notes.length > 0) {
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [limitRangerAnnotation()]: `LimitRanger plugin set: ${notes.join('; ')}`,
    };
  }
}

/**
 * Kubernetes' LimitRanger: on pod creation (not updates: containers' resources cannot change)
 * the Container items of every LimitRange in the namespace give containers and init containers
 * the default requests and limits they lack (noted in the `<prefix>/limit-ranger` annotation);
 * then min, max and maxLimitRequestRatio are enforced per Container, per Pod (summed requests
 * and limits) and, on claim creates and updates, per PersistentVolumeClaim (its storage
 * request), refused with Kubernetes' messages: `pods "x" is forbidden: maximum cpu usage per
 * Container is 1, but limit is 2`. Objects being deleted are not checked.
 */
export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';
  private readonly liveLookups = new Map<string, { expiry: number; items: Promise<LimitRange[]> }>();

  constructor(private readonly o: LimitRangerOptions) {}

  private kind(a: AdmissionAttributes): 'pod' | 'claim' | undefined {
    if (a.subresource !== '' || a.resource.group !== '' || !a.object) return undefined;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
    if (a.oldObject?.metadata.deletionTimestamp) return undefined;
    if (a.resource.plural === 'pods') return a.operation === 'CREATE' ? 'pod' : undefined;
    return a.resource.plural === 'persistentvolumeclaims' ? 'claim' : undefined;
  }

  /** The cache's LimitRanges; a namespace it has none for is looked up in storage, at most every 30 s. */
  private async limitRanges(namespace: string): Promise<LimitRange[]> {
    const cached = await this.o.cached(namespace);
    if (cached.length > 0) return cached;
    const now = Date.now();
    let entry = this.liveLookups.get(namespace);
    if (!entry || entry.expiry < now) {
      entry = { expiry: now + LIVE_LOOKUP_TTL_MS, items: this.o.live(namespace) };
      this.liveLookups.set(namespace, entry);
      entry.items.catch(() => this.liveLookups.delete(namespace));
      if (this.liveLookups.size > 10_000) this.liveLookups.delete(this.liveLookups.keys().next().value as string);
    }
    return entry.items;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (this.kind(a) !== 'pod') return;
    const pod = a.object as Pod;
    pod.spec ??= { containers: [] };
    // Kubernetes defaults requests from limits when it decodes the pod, before admission.
    defaultRequestsFromLimits(pod.spec);
    for (const lr of await this.lookup(a)) defaultPod(lr, pod);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const kind = this.kind(a);
    if (!kind) return;
    for (const lr of await this.lookup(a)) {
      const errs =
        kind === 'pod' ? podValidationErrors(lr, a.object as Pod) : claimValidationErrors(lr, a.object as ApiObject);
      if (errs.length > 0) throw admissionForbidden(a, aggregate(errs));
    }
  }

  private async lookup(a: AdmissionAttributes): Promise<LimitRange[]> {
    try {
      return await this.limitRanges(a.namespace);
    } catch (e) {
      throw admissionForbidden(a, (e as Error).message);
    }
  }
}

/** LimitRanger over the server's LimitRanges: the watch cache through an informer, storage when it has none. */
export function newLimitRanger(c: AdmissionContext): LimitRanger {
  const type = (): ReturnType<AdmissionContext['catalog']['lookup']> => c.catalog.lookup('', 'v1', 'limitranges');
  const lister = new StoreLister<LimitRange>({
    store: () => {
      const t = type();
      return t ? c.storeFor(t) : undefined;
    },
    signal: c.signal,
    onError: (e) => c.log.warn('LimitRanger informer failed; relisting', { error: (e as Error).message }),
  });
  return new LimitRanger({
    cached: (ns) => lister.list(ns),
    live: async (ns) => {
      const t = type();
      return t ? ((await c.storeFor(t).list(ns)).items as LimitRange[]) : [];
    },
  });
}
