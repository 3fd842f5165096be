// Kubernetes' quota evaluation (k8s.io/apiserver/pkg/quota/v1 and pkg/quota/v1/evaluator/core):
// what an object uses of which quota resources, which quotas and scopes match it, and the
// admission check that charges a request against the quotas of its namespace. Pure: the
// admission plugin and the resourcequota controller bring the objects.

import { group, type ApiObject, type Pod, type ResourceQuota, type ScopedResourceSelectorRequirement } from '@svc/api';
import { labelSelectorFromObject } from './label-selector-object.js';
import { computePodQos, podLimits, podRequests, quantitiesOf, type Quantities } from './pod-resources.js';
import { Quantity } from './quantity-math.js';
import { isExtendedResourceName, isNativeResource } from './resource-names.js';

export type QuotaOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** How one kind of object uses quota (Kubernetes' quota.Evaluator). */
export interface QuotaEvaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a request may change this kind's usage. */
  handles(operation: QuotaOperation, subresource: string): boolean;
  /** The quota resource names of `names` this kind is charged for (sorted, unique, then prefixed ones). */
  matchingResources(names: readonly string[]): string[];
  /** Whether the object is in the scope (kinds without scopes match none). */
  matchesScope(req: ScopedResourceSelectorRequirement, obj: ApiObject): boolean;
  /** What the object must declare for a quota that limits `required` (a message when it does not). */
  constraints(required: readonly string[], obj: ApiObject): string | undefined;
  /** What the object uses; `now` (ms) decides whether a terminating pod still counts. */
  usage(obj: ApiObject, now: number): Quantities;
}

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
export function objectCountResourceName(g: string, resource: string): string {
  return g ? `count/${resource}.${g}` : `count/${resource}`;
}

/** The group and resource a `count/...` name counts, or undefined for other names. */
export function parseObjectCountResourceName(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

function one(): Quantity {
  return Quantity.of(1);
}

/** Deduplicated and sorted, as Kubernetes' quota.Intersection. */
function intersection(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set(a.filter((x) => b.includes(x)))].sort();
}

/** Counts objects of one kind when they are created (Kubernetes' objectCountEvaluator). */
class ObjectCountEvaluator implements QuotaEvaluator {
  private readonly names: string[];
  constructor(
    readonly group: string,
    readonly resource: string,
    alias?: string,
  ) {
    this.names = [objectCountResourceName(group, resource), ...(alias ? [alias] : [])];
  }
  handles(operation: QuotaOperation, subresource: string): boolean {
    return subresource === '' && operation === 'CREATE';
  }
  matchingResources(names: readonly string[]): string[] {
    return intersection(names, this.names);
  }
  matchesScope(): boolean {
    return false;
  }
  constraints(): undefined {
    return undefined;
  }
  usage(): Quantities {
    return new Map(this.names.map((n) => [n, one()]));
  }
}

const POD_RESOURCES = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];
const POD_RESOURCE_PREFIXES = ['hugepages-', 'requests.hugepages-'];
/** Resources a quota makes every container declare (a mistake Kubernetes keeps for compatibility). */
const POD_VALIDATION_SET = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/** A pod's compute usage from its requests and limits (Kubernetes' podComputeUsageHelper). */
function podComputeUsage(requests: Quantities, limits: Quantities): Quantities {
  const out: Quantities = new Map([['pods', one()]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [name, q] of requests) {
    if (name.startsWith('hugepages-')) {
      out.set(name, q);
      out.set(`requests.${name}`, q);
    }
    if (isExtendedResourceName(name)) out.set(`requests.${name}`, q);
  }
  return out;
}

/** Whether a pod still counts against compute quota: not terminal, and not past its deletion grace period. */
export function podCountsForQuota(pod: Pod, now: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const m = pod.metadata;
  if (m.deletionTimestamp && m.deletionGracePeriodSeconds !== undefined) {
    const end = Date.parse(m.deletionTimestamp) + m.deletionGracePeriodSeconds * 1000;
    if (now > end) return false;
  }
  return true;
}

function usesCrossNamespacePodAffinity(pod: Pod): boolean {
  type Term = { namespaces?: string[]; namespaceSelector?: unknown };
  const cross = (t: Term | undefined): boolean => !!t && ((t.namespaces ?? []).length > 0 || !!t.namespaceSelector);
  const a = pod.spec.affinity as
    | Record<
        string,
        | {
            requiredDuringSchedulingIgnoredDuringExecution?: Term[];
            preferredDuringSchedulingIgnoredDuringExecution?: Array<{ podAffinityTerm?: Term }>;
          }
        | undefined
      >
    | undefined;
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const x = a?.[kind];
    if (!x) continue;
    if ((x.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(cross)) return true;
    if ((x.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((w) => cross(w.podAffinityTerm))) return true;
  }
  return false;
}

class PodEvaluator implements QuotaEvaluator {
  readonly group = '';
  readonly resource = 'pods';

  // InPlacePodVerticalScaling is off in 1.32: only creates change a pod's usage.
  handles(operation: QuotaOperation, subresource: string): boolean {
    return subresource === '' && operation === 'CREATE';
  }

  matchingResources(names: readonly string[]): string[] {
    const out = intersection(names, POD_RESOURCES);
    for (const n of names) {
      if (POD_RESOURCE_PREFIXES.some((p) => n.startsWith(p))) out.push(n);
      if (!isNativeResource(n) && n.startsWith('requests.')) out.push(n);
    }
    return out;
  }

  matchesScope(req: ScopedResourceSelectorRequirement, obj: ApiObject): boolean {
    const pod = obj as Pod;
    const spec = pod.spec ?? { containers: [] };
    switch (req.scopeName) {
      case 'Terminating':
        return spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds >= 0;
      case 'NotTerminating':
        return !(spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds >= 0);
      case 'BestEffort':
        return (pod.status?.qosClass ?? computePodQos(spec)) === 'BestEffort';
      case 'NotBestEffort':
        return (pod.status?.qosClass ?? computePodQos(spec)) !== 'BestEffort';
      case 'PriorityClass': {
        const name = spec.priorityClassName ?? '';
        if (req.operator === 'Exists') return name !== '';
        const selector = labelSelectorFromObject({
          matchExpressions: [{ key: 'PriorityClass', operator: req.operator, values: req.values }],
        });
        return selector.matches(name ? { PriorityClass: name } : {});
      }
      case 'CrossNamespacePodAffinity':
        return usesCrossNamespacePodAffinity(pod);
      default:
        return false;
    }
  }

  constraints(required: readonly string[], obj: ApiObject): string | undefined {
    const spec = (obj as Pod).spec ?? { containers: [] };
    const requiredSet = POD_VALIDATION_SET.filter((r) => required.includes(r));
    const missing = new Map<string, Set<string>>();
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      const usage = podComputeUsage(quantitiesOf(c.resources?.requests), quantitiesOf(c.resources?.limits));
      for (const r of requiredSet) {
        if (usage.has(r)) continue;
        const names = missing.get(r) ?? new Set<string>();
        names.add(c.name);
        missing.set(r, names);
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...(missing.get(r) ?? [])].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  }

  usage(obj: ApiObject, now: number): Quantities {
    const pod = obj as Pod;
    const out: Quantities = new Map([['count/pods', one()]]);
    if (!podCountsForQuota(pod, now)) return out;
    const spec = pod.spec ?? { containers: [] };
    return addQuantities(out, podComputeUsage(podRequests(spec), podLimits(spec)));
  }
}

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

class ServiceEvaluator implements QuotaEvaluator {
  readonly group = '';
  readonly resource = 'services';
  /** Creates and updates: a service's type can change. */
  handles(operation: QuotaOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }
  matchingResources(names: readonly string[]): string[] {
    return intersection(names, SERVICE_RESOURCES);
  }
  matchesScope(): boolean {
    return false;
  }
  constraints(): undefined {
    return undefined;
  }
  usage(obj: ApiObject): Quantities {
    const spec = (obj.spec ?? {}) as { type?: string; ports?: unknown[]; allocateLoadBalancerNodePorts?: boolean };
    const ports = (spec.ports ?? []).length;
    const out: Quantities = new Map([
      ['count/services', one()],
      ['services', one()],
      ['services.loadbalancers', Quantity.zero()],
      ['services.nodeports', Quantity.zero()],
    ]);
    if (spec.type === 'NodePort') out.set('services.nodeports', Quantity.of(ports));
    if (spec.type === 'LoadBalancer') {
      out.set('services.loadbalancers', one());
      if (spec.allocateLoadBalancerNodePorts !== false) out.set('services.nodeports', Quantity.of(ports));
    }
    return out;
  }
}

const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

/** The `<class>.storageclass.storage.<suffix>/` infix of per-storage-class quota names. */
export function storageClassQuotaSuffix(): string {
  return `.storageclass.${group('storage')}/`;
}

class PersistentVolumeClaimEvaluator implements QuotaEvaluator {
  readonly group = '';
  readonly resource = 'persistentvolumeclaims';
  /** Creates, and updates (expansion changes the request). */
  handles(operation: QuotaOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }
  matchingResources(names: readonly string[]): string[] {
    const out: string[] = [];
    for (const n of names) {
      if (n === 'count/persistentvolumeclaims' || PVC_RESOURCES.includes(n)) out.push(n);
      else if (PVC_RESOURCES.some((r) => n.endsWith(`${storageClassQuotaSuffix()}${r}`))) out.push(n);
    }
    return out;
  }
  matchesScope(): boolean {
    return false;
  }
  constraints(): undefined {
    return undefined;
  }
  usage(obj: ApiObject): Quantities {
    type Claim = {
      spec?: { storageClassName?: string; resources?: { requests?: Record<string, string> } };
      status?: { allocatedResources?: Record<string, string> };
    };
    const pvc = obj as Claim;
    const out: Quantities = new Map([
      ['persistentvolumeclaims', one()],
      ['count/persistentvolumeclaims', one()],
    ]);
    const storageClass = pvc.spec?.storageClassName ?? '';
    if (storageClass) out.set(`${storageClass}${storageClassQuotaSuffix()}persistentvolumeclaims`, one());
    let storage = Quantity.tryParse(pvc.spec?.resources?.requests?.storage)?.roundUp();
    const allocated = Quantity.tryParse(pvc.status?.allocatedResources?.storage)?.roundUp();
    if (allocated && (!storage || allocated.cmp(storage) > 0)) storage = allocated;
    if (storage) {
      out.set('requests.storage', storage);
      if (storageClass) out.set(`${storageClass}${storageClassQuotaSuffix()}requests.storage`, storage);
    }
    return out;
  }
}

/** Kinds counted under their old names besides `count/...`. */
const LEGACY_COUNT_ALIASES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

/** The evaluator of a group/resource: pods, services and claims have their own, the rest are counted. */
export function quotaEvaluatorFor(g: string, resource: string): QuotaEvaluator {
  if (g === '') {
    if (resource === 'pods') return new PodEvaluator();
    if (resource === 'services') return new ServiceEvaluator();
    if (resource === 'persistentvolumeclaims') return new PersistentVolumeClaimEvaluator();
    const alias = LEGACY_COUNT_ALIASES[resource];
    if (alias) return new ObjectCountEvaluator(g, resource, alias);
  }
  return new ObjectCountEvaluator(g, resource);
}

/**
 * The group/resources whose objects a quota with these hard limits counts: pods, services and
 * claims for their own names, the legacy count names, and every `count/<resource>.<group>`.
 */
export function trackedGroupResources(hardNames: readonly string[]): Array<{ group: string; resource: string }> {
  const out = new Map<string, { group: string; resource: string }>();
  const add = (g: string, resource: string): void => {
    out.set(`${resource}.${g}`, { group: g, resource });
  };
  for (const r of ['pods', 'services', 'persistentvolumeclaims', ...Object.keys(LEGACY_COUNT_ALIASES)]) {
    if (quotaEvaluatorFor('', r).matchingResources(hardNames).length > 0) add('', r);
  }
  for (const n of hardNames) {
    const gr = parseObjectCountResourceName(n);
    if (gr) add(gr.group, gr.resource);
  }
  return [...out.values()];
}

/** `spec.scopes` as Exists requirements, then `spec.scopeSelector`'s. */
export function quotaScopeSelectors(q: ResourceQuota): ScopedResourceSelectorRequirement[] {
  return [
    ...(q.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' })),
    ...(q.spec?.scopeSelector?.matchExpressions ?? []),
  ];
}

/** Whether the quota limits the object: it tracks one of the kind's resources and every scope matches. */
export function quotaMatches(e: QuotaEvaluator, q: ResourceQuota, obj: ApiObject): boolean {
  if (e.matchingResources(Object.keys(q.status?.hard ?? {})).length === 0) return false;
  return quotaScopeSelectors(q).every((s) => e.matchesScope(s, obj));
}

// Resource lists (Kubernetes' quota helpers), over exact quantities.

export function addQuantities(a: Quantities, b: Quantities): Quantities {
  const out: Quantities = new Map();
  for (const [k, v] of a) {
    const o = b.get(k);
    out.set(k, o ? v.add(o) : v);
  }
  for (const [k, v] of b) if (!out.has(k)) out.set(k, v);
  return out;
}

/** `a - b`, never below zero. */
export function subtractNonNegative(a: Quantities, b: Quantities): Quantities {
  const out: Quantities = new Map();
  for (const [k, v] of a) {
    const o = b.get(k);
    const d = o ? v.sub(o) : v;
    out.set(k, d.sign() > 0 ? d : Quantity.zero());
  }
  for (const k of b.keys()) if (!out.has(k)) out.set(k, Quantity.zero());
  return out;
}

export function maskQuantities(a: Quantities, names: readonly string[]): Quantities {
  return new Map([...a].filter(([k]) => names.includes(k)));
}

export function quantitiesEqual(a: Quantities, b: Quantities): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const o = b.get(k);
    if (!o || o.cmp(v) !== 0) return false;
  }
  return true;
}

/** `name=value,...` sorted by name (Kubernetes' prettyPrint for quota messages). */
export function prettyPrintQuantities(a: Quantities): string {
  return [...a.keys()]
    .sort()
    .map((k) => `${k}=${a.get(k)?.toString() ?? '0'}`)
    .join(',');
}

/** Kubernetes' ResourceQuotaConfiguration `limitedResources`: kinds that may only be consumed under a covering quota. */
export interface LimitedResource {
  apiGroup?: string;
  resource: string;
  matchContains?: string[];
  matchScopes?: ScopedResourceSelectorRequirement[];
}

/** Why a request was refused: `forbidden` ones are 403s, the others 500s. */
export class QuotaRejection extends Error {
  constructor(
    message: string,
    readonly forbidden: boolean,
  ) {
    super(message);
  }
}

export interface QuotaRequest {
  operation: QuotaOperation;
  subresource: string;
  object: ApiObject;
  /** The stored object (UPDATE). */
  oldObject?: ApiObject;
  now: number;
  /** `limitedResources` of the plugin's configuration. */
  limited?: readonly LimitedResource[];
}

/**
 * Kubernetes' CheckRequest: the quotas of the namespace with `status.used` as it would be if the
 * request succeeded (the same objects when no quota changes); throws a `QuotaRejection` when
 * the object lacks a constraint, a matching quota has no usage yet, or a limit would be
 * exceeded (`exceeded quota: <name>, requested: ..., used: ..., limited: ...`).
 */
export function checkQuotaRequest(
  quotas: readonly ResourceQuota[],
  e: QuotaEvaluator,
  req: QuotaRequest,
): ResourceQuota[] {
  const limited = req.limited ?? [];
  if (!e.handles(req.operation, req.subresource)) return [...quotas];
  const obj = req.object;
  const limitedScopes = limited.flatMap((l) => (l.matchScopes ?? []).filter((s) => e.matchesScope(s, obj)));
  const limitedKinds = limited.filter((l) => (l.apiGroup ?? '') === e.group && l.resource === e.resource);
  let limitedNames: string[] = [];
  if (limitedKinds.length > 0) {
    const usage = e.usage(obj, req.now);
    limitedNames = limitedKinds.flatMap((l) =>
      [...usage]
        .filter(([name, q]) => q.sign() > 0 && (l.matchContains ?? []).some((m) => name.includes(m)))
        .map(([name]) => name),
    );
  }

  const interesting: number[] = [];
  const restricted = new Set<string>();
  const restrictedScopes: ScopedResourceSelectorRequirement[] = [];
  quotas.forEach((q, i) => {
    restrictedScopes.push(...quotaScopeSelectors(q).filter((s) => e.matchesScope(s, obj)));
    if (!quotaMatches(e, q, obj)) return;
    const hard = Object.keys(q.status?.hard ?? {});
    const resources = e.matchingResources(hard);
    const missing = e.constraints(resources, obj);
    if (missing) throw new QuotaRejection(`failed quota: ${q.metadata.name ?? ''}: ${missing}`, true);
    const used = q.status?.used ?? {};
    if (resources.some((r) => hard.includes(r) && used[r] === undefined)) {
      throw new QuotaRejection(
        `status unknown for quota: ${q.metadata.name ?? ''}, resources: ${[...resources].sort().join(',')}`,
        true,
      );
    }
    interesting.push(i);
    for (const r of resources) restricted.add(r);
  });

  let delta = e.usage(obj, req.now);
  const negative = [...delta].filter(([, q]) => q.sign() < 0).map(([k]) => k);
  if (negative.length > 0) {
    throw new QuotaRejection(`quota usage is negative for resource(s): ${negative.sort().join(',')}`, true);
  }
  if (req.operation === 'UPDATE') {
    if (!req.oldObject) {
      throw new QuotaRejection('unable to get previous usage since prior version of object was not found', true);
    }
    if (req.oldObject.metadata.resourceVersion) delta = subtractNonNegative(delta, e.usage(req.oldObject, req.now));
  }
  delta = new Map([...delta].filter(([, q]) => !q.isZero()));
  if (delta.size === 0) return [...quotas];

  const uncovered = [...new Set(limitedNames.filter((n) => !restricted.has(n)))].sort();
  if (uncovered.length > 0) throw new QuotaRejection(`insufficient quota to consume: ${uncovered.join(',')}`, true);
  const uncoveredScopes = limitedScopes.filter((l) => !restrictedScopes.some((r) => r.scopeName === l.scopeName));
  if (uncoveredScopes.length > 0) {
    throw new QuotaRejection(
      `insufficient quota to match these scopes: [${uncoveredScopes.map((s) => `{${s.scopeName} ${s.operator} [${(s.values ?? []).join(' ')}]}`).join(' ')}]`,
      false,
    );
  }
  if (interesting.length === 0) return [...quotas];

  const out = quotas.map((q) => structuredClone(q));
  for (const i of interesting) {
    const q = out[i];
    if (!q) continue;
    const hard = quantitiesOf(q.status?.hard);
    const used = quantitiesOf(q.status?.used);
    const requested = maskQuantities(delta, [...hard.keys()]);
    const newUsage = addQuantities(used, requested);
    const exceeded = [...requested.keys()].filter((k) => {
      const limit = hard.get(k);
      const total = newUsage.get(k);
      return !!limit && !!total && total.cmp(limit) > 0;
    });
    if (exceeded.length > 0) {
      throw new QuotaRejection(
        `exceeded quota: ${q.metadata.name ?? ''}, requested: ${prettyPrintQuantities(maskQuantities(requested, exceeded))}, used: ${prettyPrintQuantities(maskQuantities(used, exceeded))}, limited: ${prettyPrintQuantities(maskQuantities(hard, exceeded))}`,
        true,
      );
    }
    const status = { ...q.status, used: { ...q.status?.used } };
    for (const [k, v] of newUsage) status.used[k] = v.toString();
    q.status = status;
  }
  return out;
}

/**
 * What a quota's objects use now (Kubernetes' CalculateUsage): for each tracked kind, the
 * usage of its objects in the quota's scopes, masked to the quota's hard resources. `objectsOf`
 * returns the namespace's objects of a kind, or undefined when they cannot be listed (those
 * resources are then left out, as Kubernetes keeps their previous usage).
 */
export function calculateQuotaUsage(
  q: ResourceQuota,
  o: {
    objectsOf(g: string, resource: string): readonly ApiObject[] | undefined;
    now: number;
  },
): { used: Quantities; unknown: string[] } {
  const hardNames = Object.keys(q.spec?.hard ?? {});
  const scopes = quotaScopeSelectors(q);
  let used: Quantities = new Map();
  const matched = new Set<string>();
  const unknown: string[] = [];
  for (const gr of trackedGroupResources(hardNames)) {
    const e = quotaEvaluatorFor(gr.group, gr.resource);
    const names = e.matchingResources(hardNames);
    if (names.length === 0) continue;
    const objects = o.objectsOf(gr.group, gr.resource);
    if (!objects) {
      unknown.push(...names);
      continue;
    }
    let stats: Quantities = new Map(names.map((n) => [n, Quantity.zero()]));
    for (const obj of objects) {
      if (!scopes.every((s) => e.matchesScope(s, obj))) continue;
      stats = addQuantities(stats, e.usage(obj, o.now));
    }
    used = addQuantities(used, stats);
    for (const n of names) matched.add(n);
  }
  return { used: maskQuantities(used, [...matched]), unknown };
}
