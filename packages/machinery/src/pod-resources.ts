// What a pod asks for, as Kubernetes computes it (pkg/api/v1/resource, the QoS helper and v1
// pod defaulting): requests and limits summed over containers, init containers taking the
// maximum (sidecars adding up), the pod overhead; the QoS class.

import type { Container, PodSpec, ResourceList } from '@svc/api';
import { Quantity } from './quantity-math.js';

/** Amounts by resource name, exact. */
export type Quantities = Map<string, Quantity>;

/** The quantities of a written list; entries that are not quantities are left out (validation refuses them). */
export function quantitiesOf(list: ResourceList | undefined): Quantities {
  const out: Quantities = new Map();
  for (const [name, text] of Object.entries(list ?? {})) {
    const q = Quantity.tryParse(text);
    if (q) out.set(name, q);
  }
  return out;
}

/** The wire form (canonical text), names in the map's order. */
export function resourceListOf(q: Quantities): ResourceList {
  const out: ResourceList = {};
  for (const [name, v] of q) out[name] = v.toString();
  return out;
}

function addInto(list: Quantities, add: Quantities): void {
  for (const [name, q] of add) {
    const v = list.get(name);
    list.set(name, v ? v.add(q) : q);
  }
}

function maxInto(list: Quantities, other: Quantities): void {
  for (const [name, q] of other) {
    const v = list.get(name);
    if (!v || q.cmp(v) > 0) list.set(name, q);
  }
}

function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

function aggregate(spec: PodSpec, of: (c: Container) => ResourceList | undefined): Quantities {
  const total: Quantities = new Map();
  for (const c of spec.containers ?? []) addInto(total, quantitiesOf(of(c)));
  const sidecars: Quantities = new Map();
  const init: Quantities = new Map();
  for (const c of spec.initContainers ?? []) {
    const own = quantitiesOf(of(c));
    let effective: Quantities;
    if (isSidecar(c)) {
      addInto(total, own);
      addInto(sidecars, own);
      effective = sidecars;
    } else {
      effective = new Map(own);
      addInto(effective, sidecars);
    }
    maxInto(init, effective);
  }
  maxInto(total, init);
  return total;
}

/**
 * Kubernetes' PodRequests: containers summed, init containers as the most any one needs while
 * it runs (with the sidecars started before it), sidecars added; plus `spec.overhead` unless
 * `excludeOverhead`.
 */
export function podRequests(spec: PodSpec, o: { excludeOverhead?: boolean } = {}): Quantities {
  const reqs = aggregate(spec, (c) => c.resources?.requests);
  if (!o.excludeOverhead && spec.overhead) addInto(reqs, quantitiesOf(spec.overhead));
  return reqs;
}

/** Kubernetes' PodLimits: as requests; the overhead is added only to resources that have a limit. */
export function podLimits(spec: PodSpec, o: { excludeOverhead?: boolean } = {}): Quantities {
  const limits = aggregate(spec, (c) => c.resources?.limits);
  if (!o.excludeOverhead && spec.overhead) {
    for (const [name, q] of quantitiesOf(spec.overhead)) {
      const v = limits.get(name);
      if (v) limits.set(name, v.add(q));
    }
  }
  return limits;
}

const QOS_RESOURCES = ['cpu', 'memory'];

/** Kubernetes' ComputePodQOS over cpu and memory of every container and init container. */
export function computePodQos(spec: PodSpec): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const requests: Quantities = new Map();
  const limits: Quantities = new Map();
  let guaranteed = true;
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    for (const [name, q] of quantitiesOf(c.resources?.requests)) {
      if (QOS_RESOURCES.includes(name) && q.sign() > 0) addInto(requests, new Map([[name, q]]));
    }
    const found = new Set<string>();
    for (const [name, q] of quantitiesOf(c.resources?.limits)) {
      if (!QOS_RESOURCES.includes(name) || q.sign() <= 0) continue;
      found.add(name);
      addInto(limits, new Map([[name, q]]));
    }
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, q] of requests) {
      const l = limits.get(name);
      if (!l || l.cmp(q) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/**
 * Kubernetes' v1 pod defaulting of resources (pods only, not templates): a container with a
 * limit and no request for that resource requests its limit.
 */
export function defaultRequestsFromLimits(spec: PodSpec): void {
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const limits = c.resources?.limits;
    if (!limits) continue;
    const requests = { ...c.resources?.requests };
    let changed = false;
    for (const [name, q] of Object.entries(limits)) {
      if (requests[name] !== undefined) continue;
      requests[name] = q;
      changed = true;
    }
    if (changed) c.resources = { ...c.resources, requests };
  }
}
