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

/** One EndpointSlice to be written: its address type, ports and endpoints. */
export interface DesiredSlice {
  addressType: EndpointSlice['addressType'];
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

/** The metadata a slice manager sets on a slice it writes (given the slice it replaces, if any). */
export type SliceMeta = Required<Pick<EndpointSlice['metadata'], 'labels' | 'annotations' | 'ownerReferences'>>;

/** The slices `manager` keeps for one Service (by the service-name and managed-by labels), by name. */
export function slicesManagedBy(
  store: { byIndex(i: string, v: string): EndpointSlice[] },
  o: { namespace: string; service: string; manager: string },
): EndpointSlice[] {
  return store
    .byIndex(NAMESPACE_INDEX, o.namespace)
    .filter(
      (s) =>
        s.metadata.labels?.[endpointSliceLabel('service-name')] === o.service &&
        s.metadata.labels?.[endpointSliceLabel('managed-by')] === o.manager,
    )
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** The `namespace/service` key of a slice `manager` keeps, for its informer handler; none for other slices. */
export function serviceKeyOfSlice(s: EndpointSlice, manager: string): string[] {
  const svc = s.metadata.labels?.[endpointSliceLabel('service-name')];
  return svc && s.metadata.labels?.[endpointSliceLabel('managed-by')] === manager
    ? [`${s.metadata.namespace ?? ''}/${svc}`]
    : [];
}

/** Deletes a slice; one already gone is fine. */
export async function deleteSlice(api: ResourceClient<EndpointSlice>, s: EndpointSlice): Promise<void> {
  try {
    await api.namespace(s.metadata.namespace ?? '').delete(s.metadata.name ?? '');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/**
 * Makes `existing` (the slices one manager owns for one Service) into `desired`: each desired
 * slice takes the place of an existing one of the same address type and port set (in order),
 * is left alone when `unchanged` says so, else updated in place; the others are created with
 * `generateName`; existing slices left over are deleted. Resolves with the slices written (as
 * the server returned them) and the names deleted. Shared by the endpointslice and
 * endpointslice-mirroring controllers.
 */
export async function writeSlices(o: {
  api: ResourceClient<EndpointSlice>;
  namespace: string;
  existing: readonly EndpointSlice[];
  desired: readonly DesiredSlice[];
  generateName: string;
  meta: (old: EndpointSlice | undefined) => SliceMeta;
  unchanged: (old: EndpointSlice, want: DesiredSlice, meta: SliceMeta) => boolean;
}): Promise<{ written: EndpointSlice[]; deleted: string[] }> {
  const written: EndpointSlice[] = [];
  const deleted: string[] = [];
  const key = (addressType: string, ports: readonly SlicePort[]): string => `${addressType}${portsKey(ports)}`;
  const byKey = new Map<string, EndpointSlice[]>();
  for (const s of o.existing) {
    const k = key(s.addressType, s.ports ?? []);
    byKey.set(k, [...(byKey.get(k) ?? []), s]);
  }
  const api = o.api.namespace(o.namespace);
  for (const want of o.desired) {
    const old = byKey.get(key(want.addressType, want.ports))?.shift();
    const meta = o.meta(old);
    if (old && o.unchanged(old, want, meta)) continue;
    const slice: EndpointSlice = {
      apiVersion: `${group('discovery')}/v1`,
      kind: 'EndpointSlice',
      metadata: {
        ...(old
          ? { name: old.metadata.name, resourceVersion: old.metadata.resourceVersion }
          : { generateName: o.generateName }),
        namespace: o.namespace,
        ...meta,
      },
      addressType: want.addressType,
      endpoints: want.endpoints,
      ports: want.ports,
    };
    written.push(await (old ? api.update(slice) : api.create(slice)));
  }
  for (const left of byKey.values())
    for (const s of left) {
      await deleteSlice(o.api, s);
      deleted.push(s.metadata.name ?? '');
    }
  return { written, deleted };
}

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
    const api = new ResourceClient<EndpointSlice>(ctx.client, R.endpointSlices());
    const maxPerSlice = ctx.options.maxEndpointsPerSlice || MAX_ENDPOINTS_PER_SLICE;
    const manager = (): string => endpointsControllerKey('slice-manager');

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'endpoint_slice',
      workers: ctx.options.concurrentSyncs['service-endpoint'],
      reconcile: async (key) => {
        const { namespace = '', name } = splitKey(key);
        const svc = services.store.get(key);
        const existing = slicesManagedBy(slices.store, { namespace, service: name, manager: manager() });
        if (!svc || !hasSelector(svc)) {
          for (const s of existing) await deleteSlice(api, s);
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
        const desired: DesiredSlice[] = [];
        for (const g of groups.values())
          for (let i = 0; i < Math.max(1, Math.ceil(g.endpoints.length / maxPerSlice)); i++)
            desired.push({
              addressType: 'IPv4',
              ports: g.ports,
              endpoints: g.endpoints.slice(i * maxPerSlice, (i + 1) * maxPerSlice),
            });
        await writeSlices({
          api,
          namespace,
          existing,
          desired,
          generateName: `${name}-`,
          meta: (old) => {
            const annotations: Record<string, string> = { ...(old?.metadata.annotations ?? {}) };
            if (trigger) annotations[endpointsControllerKey('trigger-time')] = trigger;
            return { labels, annotations, ownerReferences: [newControllerRef(svc, 'v1', 'Service')] };
          },
          unchanged: (old, want) =>
            jsonEqual(old.endpoints ?? [], want.endpoints) &&
            jsonEqual(old.ports ?? [], want.ports) &&
            jsonEqual(old.metadata.labels ?? {}, labels),
        });
      },
    });

    controller.watch(services);
    controller.watch(slices, (s) => serviceKeyOfSlice(s, manager()));
    controller.watch(pods, () => []);
    const enqueue = (...ps: Pod[]): void => {
      // Kubernetes' endpointslice controller: a pod change is batched for --endpointslice-updates-batch-period.
      for (const k of servicesOfPod(services.store, ps))
        controller.queue.addAfter(k, ctx.options.endpointSliceUpdatesBatchPeriodMs);
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
