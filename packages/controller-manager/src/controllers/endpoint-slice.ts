import {
  endpointSliceLabel,
  endpointsControllerKey,
  group,
  isNotFound,
  type EndpointSlice,
  type Pod,
  type SliceEndpoint,
  type SlicePort,
} from '@svc/api';
import { NAMESPACE_INDEX, ResourceClient, splitKey } from '@svc/client';
import { jsonEqual } from '@svc/machinery';
import { informer, newController, type ControllerContext, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { newControllerRef } from './controller-ref.js';
import { serviceLabels, servicesOfPod } from './endpoints.js';
import { hasSelector, lastChangeTriggerTime, podEndpoint, selects, type Service } from './service-endpoints.js';

const NAME = 'endpointslice-controller';
/** Kubernetes' `--max-endpoints-per-slice` default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

interface Group {
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

/**
 * A port set's identity, independent of the order of the ports and of the keys inside each
 * (a slice read back from the server spells its ports in schema order, not in ours).
 */
const portsKey = (ports: readonly SlicePort[]): string =>
  JSON.stringify(
    ports
      .map((p) => [p.name ?? '', p.port ?? 0, p.protocol ?? 'TCP', p.appProtocol ?? ''])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1])),
  );

/** The desired endpoints of `svc`, grouped by the ports they resolve to (terminating pods included, as Kubernetes). */
export function sliceGroups(svc: Service, pods: readonly Pod[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  const hasPorts = (svc.spec?.ports ?? []).length > 0;
  for (const pod of pods) {
    if (!selects(svc, pod)) continue;
    const ep = podEndpoint(svc, pod, { includeTerminating: true });
    if (!ep || (hasPorts && ep.ports.length === 0) || ep.address.ip.includes(':')) continue;
    const ports: SlicePort[] = ep.ports.map((p) => {
      const sp: SlicePort = { name: p.name ?? '', port: p.port, protocol: p.protocol };
      if (p.appProtocol) sp.appProtocol = p.appProtocol;
      return sp;
    });
    const key = portsKey(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, endpoints: [] }));
    const se: SliceEndpoint = {
      addresses: [ep.address.ip],
      conditions: { ready: ep.ready, serving: ep.serving, terminating: ep.terminating },
    };
    if (ep.address.hostname) se.hostname = ep.address.hostname;
    if (ep.address.nodeName) se.nodeName = ep.address.nodeName;
    if (ep.address.targetRef) se.targetRef = ep.address.targetRef;
    g.endpoints.push(se);
  }
  for (const g of groups.values())
    g.endpoints.sort((a, b) => (a.addresses[0] ?? '').localeCompare(b.addresses[0] ?? '', 'en', { numeric: true }));
  return groups;
}

/**
 * `endpointslice-controller`: keeps the EndpointSlices of each Service with a selector (IPv4,
 * at most `--max-endpoints-per-slice` endpoints each, one slice set per port set), with
 * ready/serving/terminating conditions from pod readiness and deletion, nodeName and
 * targetRef, the Service's labels plus service-name and managed-by, a controller reference to
 * the Service and the last-change-trigger-time annotation. A Service with no endpoints keeps
 * one empty placeholder slice (no ports, no endpoints), as Kubernetes. Slices of other managers
 * (the API server's own `svc` Service) are not touched.
 */
export const endpointSliceController: ControllerDefinition = {
  name: NAME,
  build(ctx: ControllerContext) {
    const services = informer<Service>(ctx, R.services());
    const pods = informer<Pod>(ctx, R.pods());
    const slices = informer<EndpointSlice>(ctx, R.endpointSlices());
    const api = (ns: string): ResourceClient<EndpointSlice> =>
      new ResourceClient<EndpointSlice>(ctx.client, R.endpointSlices()).namespace(ns);
    const maxPerSlice = ctx.options.maxEndpointsPerSlice || MAX_ENDPOINTS_PER_SLICE;
    const manager = (): string => endpointsControllerKey('slice-manager');
    const ownedSlices = (namespace: string, name: string): EndpointSlice[] =>
      slices.store
        .byIndex(NAMESPACE_INDEX, namespace)
        .filter(
          (s) =>
            s.metadata.labels?.[endpointSliceLabel('service-name')] === name &&
            s.metadata.labels?.[endpointSliceLabel('managed-by')] === manager(),
        )
        .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));

    const remove = async (s: EndpointSlice): Promise<void> => {
      try {
        await api(s.metadata.namespace ?? '').delete(s.metadata.name ?? '');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    };

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'endpoint_slice',
      workers: ctx.options.concurrentSyncs['service-endpoint'],
      reconcile: async (key) => {
        const { namespace = '', name } = splitKey(key);
        const svc = services.store.get(key);
        const existing = ownedSlices(namespace, name);
        if (!svc || !hasSelector(svc)) {
          for (const s of existing) await remove(s);
          return;
        }
        const nsPods = pods.store.byIndex(NAMESPACE_INDEX, namespace);
        const groups = sliceGroups(svc, nsPods);
        if (groups.size === 0) groups.set(portsKey([]), { ports: [], endpoints: [] });
        const labels = {
          ...serviceLabels(svc),
          [endpointSliceLabel('service-name')]: name,
          [endpointSliceLabel('managed-by')]: manager(),
        };
        const trigger = lastChangeTriggerTime(svc, nsPods);
        const free = [...existing];
        const byKey = new Map<string, EndpointSlice[]>();
        for (const s of existing) {
          const k = portsKey(s.ports ?? []);
          byKey.set(k, [...(byKey.get(k) ?? []), s]);
        }
        for (const [k, g] of groups) {
          const reuse = byKey.get(k) ?? [];
          for (let i = 0; i < Math.max(1, Math.ceil(g.endpoints.length / maxPerSlice)); i++) {
            const endpoints = g.endpoints.slice(i * maxPerSlice, (i + 1) * maxPerSlice);
            const old = reuse[i];
            if (old) free.splice(free.indexOf(old), 1);
            if (
              old &&
              jsonEqual(old.endpoints ?? [], endpoints) &&
              jsonEqual(old.ports ?? [], g.ports) &&
              jsonEqual(old.metadata.labels ?? {}, labels)
            )
              continue;
            const annotations: Record<string, string> = { ...(old?.metadata.annotations ?? {}) };
            if (trigger) annotations[endpointsControllerKey('trigger-time')] = trigger;
            const slice: EndpointSlice = {
              apiVersion: `${group('discovery')}/v1`,
              kind: 'EndpointSlice',
              metadata: {
                ...(old
                  ? { name: old.metadata.name, resourceVersion: old.metadata.resourceVersion }
                  : { generateName: `${name}-` }),
                namespace,
                labels,
                annotations,
                ownerReferences: [newControllerRef(svc, 'v1', 'Service')],
              },
              addressType: 'IPv4',
              endpoints,
              ports: g.ports,
            };
            if (old) await api(namespace).update(slice);
            else await api(namespace).create(slice);
          }
        }
        for (const s of free) await remove(s);
      },
    });

    controller.watch(services);
    controller.watch(slices, (s) => {
      const svc = s.metadata.labels?.[endpointSliceLabel('service-name')];
      return svc && s.metadata.labels?.[endpointSliceLabel('managed-by')] === manager()
        ? [`${s.metadata.namespace ?? ''}/${svc}`]
        : [];
    });
    controller.watch(pods, () => []);
    const enqueue = (...ps: Pod[]): void => {
      for (const k of servicesOfPod(services.store, ps)) controller.enqueue(k);
    };
    pods.addEventHandler({
      onAdd: (p) => enqueue(p),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) enqueue(old, cur);
      },
      onDelete: (p) => enqueue(p),
    });
    return controller;
  },
};
