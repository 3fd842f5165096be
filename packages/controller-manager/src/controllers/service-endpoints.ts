import type { ApiObject, EndpointAddress, EndpointPort, EndpointSubset, Pod } from '@svc/api';
import { isPodReady } from './pod-util.js';

/** The parts of a Service the endpoints controllers read. */
export interface Service extends ApiObject {
  spec?: {
    selector?: Record<string, string>;
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
    ports?: Array<{
      name?: string;
      port: number;
      protocol?: string;
      appProtocol?: string;
      targetPort?: number | string;
    }>;
  };
}

export type ServicePort = NonNullable<NonNullable<Service['spec']>['ports']>[number];

/** One pod as an endpoint of a Service: its address, conditions and the Service's ports resolved on it. */
export interface PodEndpoint {
  address: EndpointAddress;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  ports: EndpointPort[];
}

export const hasSelector = (s: Service): boolean => Object.keys(s.spec?.selector ?? {}).length > 0;

export const selects = (s: Service, pod: Pod): boolean => {
  const labels = pod.metadata.labels ?? {};
  return hasSelector(s) && Object.entries(s.spec?.selector ?? {}).every(([k, v]) => labels[k] === v);
};

/**
 * The container port a Service port targets on `pod` (Kubernetes' FindPort): a number as it is
 * (the port itself when unset), a name looked up among the containers' ports of that protocol.
 */
export function findPort(pod: Pod, p: ServicePort): number | undefined {
  const target = p.targetPort ?? p.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec.containers ?? [])
    for (const cp of (c as { ports?: Array<{ name?: string; containerPort: number; protocol?: string }> }).ports ?? [])
      if (cp.name === target && (cp.protocol ?? 'TCP') === (p.protocol ?? 'TCP')) return cp.containerPort;
  return undefined;
}

/**
 * `pod` as an endpoint of `svc`, or undefined when it is none (Kubernetes' ShouldPodBeInEndpoints):
 * no IP yet, finished, or (unless `includeTerminating`) being deleted. Ports that cannot be
 * resolved on the pod are left out of its ports.
 */
export function podEndpoint(svc: Service, pod: Pod, o: { includeTerminating: boolean }): PodEndpoint | undefined {
  const ip = pod.status?.podIP;
  if (!ip) return undefined;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  if (terminating && !o.includeTerminating) return undefined;
  const address: EndpointAddress = {
    ip,
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      uid: pod.metadata.uid ?? '',
    },
  };
  if (pod.spec.nodeName) address.nodeName = pod.spec.nodeName;
  const spec = pod.spec as { hostname?: string; subdomain?: string };
  if (spec.hostname && spec.subdomain === svc.metadata.name) address.hostname = spec.hostname;
  const ports: EndpointPort[] = [];
  for (const p of svc.spec?.ports ?? []) {
    const port = findPort(pod, p);
    if (port === undefined) continue;
    const ep: EndpointPort = { port, protocol: (p.protocol ?? 'TCP') as EndpointPort['protocol'] };
    if (p.name) ep.name = p.name;
    if (p.appProtocol) ep.appProtocol = p.appProtocol;
    ports.push(ep);
  }
  const serving = svc.spec?.publishNotReadyAddresses === true || isPodReady(pod);
  return { address, ready: serving && !terminating, serving, terminating, ports };
}

const portsKey = (ports: readonly EndpointPort[]): string =>
  JSON.stringify([...ports].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port));

const byIp = (a: EndpointAddress, b: EndpointAddress): number =>
  a.ip.localeCompare(b.ip, 'en', { numeric: true }) || (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? '');

/**
 * The Endpoints subsets of `svc` (Kubernetes' endpoints controller with RepackSubsets): ready
 * and not-ready addresses grouped by the ports they resolve to, sorted. A pod whose ports
 * all fail to resolve is left out, unless the Service has no ports (headless).
 */
export function endpointSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  const hasPorts = (svc.spec?.ports ?? []).length > 0;
  for (const pod of pods) {
    if (!selects(svc, pod)) continue;
    const ep = podEndpoint(svc, pod, { includeTerminating: false });
    if (!ep || (hasPorts && ep.ports.length === 0)) continue;
    const key = portsKey(ep.ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports: ep.ports, ready: [], notReady: [] }));
    (ep.ready ? g.ready : g.notReady).push(ep.address);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => {
      const s: EndpointSubset = {};
      if (g.ready.length > 0) s.addresses = g.ready.sort(byIp);
      if (g.notReady.length > 0) s.notReadyAddresses = g.notReady.sort(byIp);
      if (g.ports.length > 0) s.ports = g.ports;
      return s;
    });
}

/**
 * The last-change-trigger-time to record (Kubernetes' TriggerTimeTracker, simplified): the
 * latest of the Service's creation and its pods' last Ready transitions.
 */
export function lastChangeTriggerTime(svc: Service, pods: readonly Pod[]): string | undefined {
  let latest = svc.metadata.creationTimestamp;
  for (const pod of pods) {
    if (!selects(svc, pod)) continue;
    const t =
      pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? pod.metadata.creationTimestamp;
    if (t && (!latest || Date.parse(t) > Date.parse(latest))) latest = t;
  }
  return latest;
}
