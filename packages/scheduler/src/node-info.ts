import type { Container, Node, Pod } from '@svc/api';
import { quantityMilliValue, quantityValue } from '@svc/machinery';

// Kubernetes' NodeInfo: a node with the pods on it (bound or assumed) and what they request.

/** Amounts by resource name: `cpu` in millicores, everything else in whole units (`pods` a count). */
export type Resources = Map<string, number>;

/** A quantity of `resource` as the scheduler counts it (cpu in millicores). */
export function amount(resource: string, q: string): number {
  return resource === 'cpu' ? quantityMilliValue(q) : quantityValue(q);
}

/** Kubernetes' defaults for containers that request no cpu or memory (for scoring only): 100m and 200 MiB. */
const NON_ZERO_DEFAULTS: Record<string, number> = { cpu: 100, memory: 200 * 1024 * 1024 };

function add(into: Resources, from: Resources): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
}

function max(into: Resources, from: Resources): void {
  for (const [k, v] of from) into.set(k, Math.max(into.get(k) ?? 0, v));
}

/** A container's requests; a resource with only a limit requests the limit (the API's defaulting). */
function containerRequests(c: Container, nonZero: boolean): Resources {
  const out: Resources = new Map();
  const limits = c.resources?.limits ?? {};
  const requests = { ...limits, ...c.resources?.requests };
  for (const [k, q] of Object.entries(requests)) out.set(k, amount(k, q));
  if (nonZero) for (const [k, v] of Object.entries(NON_ZERO_DEFAULTS)) if (!(k in requests)) out.set(k, v);
  return out;
}

/**
 * What a pod requests (Kubernetes' PodRequests): the sum of its containers and sidecars
 * (restartable init containers), at least each regular init container with the sidecars
 * started before it, plus the overhead. `nonZero` gives unset cpu/memory their defaults.
 */
export function podRequests(pod: Pod, nonZero = false): Resources {
  const spec = pod.spec ?? {};
  const total: Resources = new Map();
  for (const c of spec.containers ?? []) add(total, containerRequests(c, nonZero));
  const sidecars: Resources = new Map();
  const initMax: Resources = new Map();
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      add(sidecars, r);
      max(initMax, sidecars);
    } else {
      add(r, sidecars);
      max(initMax, r);
    }
  }
  add(total, sidecars);
  max(total, initMax);
  for (const [k, q] of Object.entries(spec.overhead ?? {})) total.set(k, (total.get(k) ?? 0) + amount(k, q));
  return total;
}

/** `protocol/hostIP/port` of each host port the pod asks for (hostIP 0.0.0.0 and protocol TCP when unset). */
export function hostPorts(pod: Pod): Array<{ protocol: string; ip: string; port: number }> {
  const out: Array<{ protocol: string; ip: string; port: number }> = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort && p.hostPort > 0)
        out.push({ protocol: p.protocol || 'TCP', ip: p.hostIP || '0.0.0.0', port: p.hostPort });
    }
  }
  return out;
}

/** Pods that ended hold no resources (Kubernetes' scheduler never sees them). */
export function isTerminated(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * One node as the scheduler sees it: the Node (absent while only pods name it), the pods on
 * it by uid, and their summed requests, kept current by `addPod`/`removePod`.
 */
export class NodeInfo {
  private current?: Node;
  private allocatableCache = new Map<string, number>();
  readonly pods = new Map<string, Pod>();
  private sums?: {
    requested: Resources;
    nonZero: Resources;
    ports: Array<{ protocol: string; ip: string; port: number }>;
  };

  constructor(readonly name: string) {}

  get node(): Node | undefined {
    return this.current;
  }

  set node(n: Node | undefined) {
    this.current = n;
    this.allocatableCache = new Map();
  }

  addPod(uid: string, pod: Pod): void {
    this.pods.set(uid, pod);
    this.sums = undefined;
  }

  removePod(uid: string): boolean {
    const had = this.pods.delete(uid);
    if (had) this.sums = undefined;
    return had;
  }

  private totals(): NonNullable<NodeInfo['sums']> {
    if (!this.sums) {
      const requested: Resources = new Map();
      const nonZero: Resources = new Map();
      const ports: Array<{ protocol: string; ip: string; port: number }> = [];
      for (const p of this.pods.values()) {
        add(requested, podRequests(p));
        add(nonZero, podRequests(p, true));
        ports.push(...hostPorts(p));
      }
      this.sums = { requested, nonZero, ports };
    }
    return this.sums;
  }

  /** What the pods on the node request. */
  get requested(): Resources {
    return this.totals().requested;
  }

  /** The same with unset cpu/memory requests counted at their defaults (scoring). */
  get nonZeroRequested(): Resources {
    return this.totals().nonZero;
  }

  get usedPorts(): ReadonlyArray<{ protocol: string; ip: string; port: number }> {
    return this.totals().ports;
  }

  /** The node's allocatable amount of `resource` (absent or malformed: 0). */
  allocatable(resource: string): number {
    let v = this.allocatableCache.get(resource);
    if (v === undefined) {
      const q = this.current?.status?.allocatable?.[resource];
      try {
        v = q === undefined ? 0 : amount(resource, q);
      } catch {
        v = 0;
      }
      this.allocatableCache.set(resource, v);
    }
    return v;
  }
}
