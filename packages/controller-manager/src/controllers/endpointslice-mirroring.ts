import { isIPv4, isIPv6 } from 'node:net';
import {
  endpointSliceLabel,
  endpointsControllerKey,
  leaderElectionAnnotation,
  naming,
  type EndpointAddress,
  type EndpointSlice,
  type Endpoints,
  type SliceEndpoint,
  type SlicePort,
} from '@svc/api';
import { EventRecorder, ResourceClient, splitKey } from '@svc/client';
import { jsonEqual } from '@svc/machinery';
import { informer, newController, type ControllerContext, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { newControllerRef } from './controller-ref.js';
import { deleteSlice, serviceKeyOfSlice, slicesManagedBy, writeSlices, type DesiredSlice } from './endpoint-slice.js';
import { hasSelector, type Service } from './service-endpoints.js';

const NAME = 'endpointslice-mirroring-controller';

/** An address as an EndpointSlice address and its family (Kubernetes' ParseIPSloppy: IPv4 may have leading zeros); undefined when not an IP. */
export function sliceAddress(ip: string): { address: string; type: 'IPv4' | 'IPv6' } | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? { address: parts.join('.'), type: 'IPv4' } : undefined;
  }
  if (!isIPv6(ip)) return undefined;
  // The URL parser writes an IPv6 address in its canonical (RFC 5952) form, as Go's String().
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const n = (parseInt(mapped[1] ?? '0', 16) << 16) | parseInt(mapped[2] ?? '0', 16);
    const address = [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
    if (isIPv4(address)) return { address, type: 'IPv4' };
  }
  return { address: canonical, type: 'IPv6' };
}

/** What mirroring an Endpoints object gives: one slice per address family and port set, and what was skipped. */
export interface Mirror {
  slices: DesiredSlice[];
  invalid: number;
  skipped: number;
}

/**
 * The EndpointSlices mirroring `ep` (Kubernetes' endpointslicemirroring reconcile): each subset's
 * ports as slice ports; its `addresses` ready, its `notReadyAddresses` not, at most
 * `maxPerSubset` of them (the rest skipped), addresses that are not IPs skipped; grouped by
 * address family and port set, repeats of an address dropped.
 */
export function mirrorSlices(ep: Endpoints, maxPerSubset: number): Mirror {
  const groups = new Map<string, DesiredSlice & { seen: Set<string> }>();
  let invalid = 0;
  let skipped = 0;
  for (const subset of ep.subsets ?? []) {
    const ports: SlicePort[] = (subset.ports ?? []).map((p) => {
      const sp: SlicePort = { name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' };
      if (p.appProtocol !== undefined) sp.appProtocol = p.appProtocol;
      return sp;
    });
    const all: Array<[EndpointAddress, boolean]> = [
      ...(subset.addresses ?? []).map((a): [EndpointAddress, boolean] => [a, true]),
      ...(subset.notReadyAddresses ?? []).map((a): [EndpointAddress, boolean] => [a, false]),
    ];
    let added = 0;
    for (const [a, ready] of all) {
      if (added >= maxPerSubset) break;
      const parsed = sliceAddress(a.ip);
      if (!parsed) {
        invalid++;
        continue;
      }
      added++;
      const key = `${parsed.type}${JSON.stringify(ports)}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { addressType: parsed.type, ports, endpoints: [], seen: new Set() }));
      const e: SliceEndpoint = { addresses: [parsed.address], conditions: { ready } };
      if (a.hostname) e.hostname = a.hostname;
      if (a.nodeName) e.nodeName = a.nodeName;
      if (a.targetRef) e.targetRef = a.targetRef;
      const id = JSON.stringify([parsed.address, a.hostname ?? '', a.nodeName ?? '', a.targetRef?.uid ?? '']);
      if (g.seen.has(id) || g.endpoints.length >= maxPerSubset) continue;
      g.seen.add(id);
      g.endpoints.push(e);
    }
    skipped += all.length - added;
  }
  return { slices: [...groups.values()].map(({ seen: _seen, ...s }) => s), invalid, skipped };
}

/** How long a sync waits for the informer to show this controller's own writes before going on anyway. */
const STALE_WAIT_MS = 5000;

/**
 * This controller's last writes per Endpoints key (Kubernetes' endpointSliceTracker, simplified):
 * the slices written, with their resourceVersion, and those deleted. Until the informer shows
 * them, a sync would work from a cache older than its own writes (and make a second slice for a
 * port set, say), so it waits (for at most STALE_WAIT_MS).
 */
export class OwnWrites {
  private readonly byKey = new Map<string, { at: number; slices: Map<string, bigint | 'deleted'> }>();

  record(key: string, w: { written: readonly EndpointSlice[]; deleted: readonly string[] }): void {
    if (w.written.length === 0 && w.deleted.length === 0) return;
    const slices = new Map<string, bigint | 'deleted'>();
    for (const s of w.written) slices.set(s.metadata.name ?? '', BigInt(s.metadata.resourceVersion ?? '0'));
    for (const name of w.deleted) slices.set(name, 'deleted');
    this.byKey.set(key, { at: Date.now(), slices });
  }

  /** True while the cache (`get` by slice name) does not show the last writes for `key` yet. */
  stale(key: string, get: (name: string) => EndpointSlice | undefined): boolean {
    const e = this.byKey.get(key);
    if (!e) return false;
    for (const [name, rv] of e.slices) {
      const cached = get(name);
      const seen = rv === 'deleted' ? !cached : !!cached && BigInt(cached.metadata.resourceVersion ?? '0') >= rv;
      if (seen) e.slices.delete(name);
    }
    if (e.slices.size > 0 && Date.now() - e.at < STALE_WAIT_MS) return true;
    this.byKey.delete(key);
    return false;
  }
}

/**
 * Whether `ep` is mirrored at all: not labelled skip-mirror=true (`endpointSliceLabel('skip-mirror')`;
 * the API server's own Endpoints are) and not a leader-election lock (`leaderElectionAnnotation()`).
 */
function shouldMirror(ep: Endpoints): boolean {
  return (
    ep.metadata.labels?.[endpointSliceLabel('skip-mirror')] !== 'true' &&
    ep.metadata.annotations?.[leaderElectionAnnotation()] === undefined
  );
}

/**
 * `endpointslice-mirroring-controller` (Kubernetes' endpointslicemirroring): an Endpoints object
 * whose Service exists and has no selector (hand-written endpoints) gets EndpointSlices
 * mirroring it, labelled with the Endpoints' labels plus the service-name and managed-by labels
 * (`endpointSliceLabel`, managed by `endpointsControllerKey('mirroring-manager')`), its annotations
 * but the last-applied configuration and the last-change-trigger-time, and a controller
 * reference to the Endpoints. The slices go when the Endpoints or the Service goes, the Service
 * gets a selector, or the Endpoints gets the skip-mirror label. Workers:
 * `--mirroring-concurrent-service-endpoint-syncs`; `--mirroring-max-endpoints-per-subset`
 * addresses per subset at most; changes of the slices themselves are picked up after
 * `--mirroring-endpointslice-updates-batch-period`.
 */
export const endpointSliceMirroringController: ControllerDefinition = {
  name: NAME,
  build(ctx: ControllerContext) {
    const services = informer<Service>(ctx, R.services());
    const endpoints = informer<Endpoints>(ctx, R.endpoints());
    const slices = informer<EndpointSlice>(ctx, R.endpointSlices());
    const api = new ResourceClient<EndpointSlice>(ctx.client, R.endpointSlices());
    const events = new EventRecorder(ctx.client, { component: NAME, logger: ctx.logger });
    const { concurrentSyncs, maxEndpointsPerSubset, updatesBatchPeriodMs } = ctx.options.mirroring;
    const manager = endpointsControllerKey('mirroring-manager');
    const dropped = new Set([naming().lastAppliedAnnotation, endpointsControllerKey('trigger-time')]);
    const own = new OwnWrites();

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'endpoint_slice_mirroring',
      workers: concurrentSyncs,
      reconcile: async (key) => {
        const { namespace = '', name } = splitKey(key);
        if (own.stale(key, (n) => slices.store.get(`${namespace}/${n}`))) return { requeueAfter: 100 };
        const existing = slicesManagedBy(slices.store, { namespace, service: name, manager });
        const ep = endpoints.store.get(key);
        const svc = services.store.get(key);
        if (!ep || !shouldMirror(ep) || !svc || hasSelector(svc)) {
          for (const s of existing) await deleteSlice(api, s);
          own.record(key, { written: [], deleted: existing.map((s) => s.metadata.name ?? '') });
          return undefined;
        }
        const mirror = mirrorSlices(ep, maxEndpointsPerSubset);
        const object = { object: ep, apiVersion: 'v1', kind: 'Endpoints', type: 'Warning' as const };
        if (mirror.invalid > 0)
          events.event({
            ...object,
            reason: 'InvalidIPAddress',
            message: `Skipped ${mirror.invalid} invalid IP addresses when mirroring to EndpointSlices`,
          });
        if (mirror.skipped > mirror.invalid)
          events.event({
            ...object,
            reason: 'TooManyAddressesToMirror',
            message: `A max of ${maxEndpointsPerSubset} addresses can be mirrored to EndpointSlices per Endpoints subset. ${mirror.skipped} addresses were skipped`,
          });
        const labels = {
          ...(ep.metadata.labels ?? {}),
          [endpointSliceLabel('service-name')]: name,
          [endpointSliceLabel('managed-by')]: manager,
        };
        const annotations = Object.fromEntries(
          Object.entries(ep.metadata.annotations ?? {}).filter(([k]) => !dropped.has(k)),
        );
        const writes = await writeSlices({
          api,
          namespace,
          existing,
          // An Endpoints object being deleted gets no new slices.
          desired: ep.metadata.deletionTimestamp ? [] : mirror.slices,
          generateName: `${name}-`,
          meta: () => ({ labels, annotations, ownerReferences: [newControllerRef(ep, 'v1', 'Endpoints')] }),
          unchanged: (old, want) =>
            jsonEqual(old.endpoints ?? [], want.endpoints) &&
            jsonEqual(old.ports ?? [], want.ports) &&
            jsonEqual(old.metadata.labels ?? {}, labels) &&
            jsonEqual(old.metadata.annotations ?? {}, annotations),
        });
        own.record(key, writes);
        return undefined;
      },
    });

    controller.watch(endpoints);
    // A Service matters when it comes, goes, or gains or loses its selector.
    controller.watch(services, () => []);
    services.addEventHandler({
      onAdd: (s) => controller.enqueue(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`),
      onUpdate: (old, s) => {
        if (hasSelector(old) !== hasSelector(s))
          controller.enqueue(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`);
      },
      onDelete: (s) => controller.enqueue(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`),
    });
    controller.watch(slices, () => []);
    const sliceChanged = (s: EndpointSlice): void => {
      for (const k of serviceKeyOfSlice(s, manager)) controller.queue.addAfter(k, updatesBatchPeriodMs);
    };
    slices.addEventHandler({
      onAdd: sliceChanged,
      onUpdate: (old, s) => {
        if (old.metadata.resourceVersion === s.metadata.resourceVersion) return;
        sliceChanged(old);
        sliceChanged(s);
      },
      onDelete: sliceChanged,
    });
    return controller;
  },
};
