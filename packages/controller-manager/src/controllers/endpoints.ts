import { endpointsControllerKey, isNotFound, type Endpoints, type Pod } from '@svc/api';
import { NAMESPACE_INDEX, ResourceClient, objectKey, splitKey } from '@svc/client';
import { jsonEqual } from '@svc/machinery';
import { informer, newController, type ControllerContext, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { endpointSubsets, hasSelector, lastChangeTriggerTime, selects, type Service } from './service-endpoints.js';

const NAME = 'endpoints-controller';

/** The labels an Endpoints or EndpointSlice carries from its Service (Kubernetes: the Service's, plus headless). */
export function serviceLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
  if (svc.spec?.clusterIP === 'None') labels[endpointsControllerKey('headless')] = '';
  else delete labels[endpointsControllerKey('headless')];
  return labels;
}

/**
 * Keys of the Services in a pod's namespace selecting it (before or after a change), for the
 * pod informers of both endpoints controllers.
 */
export function servicesOfPod(services: { byIndex(i: string, v: string): Service[] }, pods: readonly Pod[]): string[] {
  const keys = new Set<string>();
  for (const pod of pods)
    for (const s of services.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? ''))
      if (selects(s, pod)) keys.add(objectKey(s));
  return [...keys];
}

/**
 * `endpoints-controller`: keeps an Endpoints object per Service with a selector listing its
 * pods' addresses (ready ones in `addresses`, the others in `notReadyAddresses`, grouped by
 * the ports resolved on each pod), with the Service's labels and the last-change-trigger-time
 * annotation, as Kubernetes' endpoints controller. Services without a selector (the API
 * server's own `svc` Service, hand-written Endpoints) are left alone; the Endpoints of a
 * deleted Service are deleted.
 */
export const endpointsController: ControllerDefinition = {
  name: NAME,
  build(ctx: ControllerContext) {
    const services = informer<Service>(ctx, R.services());
    const pods = informer<Pod>(ctx, R.pods());
    const endpoints = informer<Endpoints>(ctx, R.endpoints());
    const api = (ns: string): ResourceClient<Endpoints> =>
      new ResourceClient<Endpoints>(ctx.client, R.endpoints()).namespace(ns);

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'endpoint',
      workers: ctx.options.concurrentSyncs.endpoint,
      reconcile: async (key) => {
        const { namespace = '', name } = splitKey(key);
        const svc = services.store.get(key);
        if (!svc) {
          if (!endpoints.store.get(key)) return;
          try {
            await api(namespace).delete(name);
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
          return;
        }
        if (!hasSelector(svc)) return;
        const nsPods = pods.store.byIndex(NAMESPACE_INDEX, namespace);
        const subsets = endpointSubsets(svc, nsPods);
        const labels = serviceLabels(svc);
        const current = endpoints.store.get(key);
        if (current && jsonEqual(current.subsets ?? [], subsets) && jsonEqual(current.metadata.labels ?? {}, labels))
          return;
        const annotations: Record<string, string> = { ...(current?.metadata.annotations ?? {}) };
        const trigger = lastChangeTriggerTime(svc, nsPods);
        if (trigger) annotations[endpointsControllerKey('trigger-time')] = trigger;
        else delete annotations[endpointsControllerKey('trigger-time')];
        const desired: Endpoints = {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: { name, namespace, labels, annotations, resourceVersion: current?.metadata.resourceVersion },
          subsets,
        };
        if (current) {
          await api(namespace).update(desired);
          return;
        }
        delete desired.metadata.resourceVersion;
        // Made meanwhile (AlreadyExists): the error requeues the key and the next pass updates it.
        await api(namespace).create(desired);
      },
    });

    controller.watch(services);
    controller.watch(endpoints);
    controller.watch(pods, () => []);
    const enqueue = (...ps: Pod[]): void => {
      // Kubernetes' endpoints controller: a pod change is batched for --endpoint-updates-batch-period.
      for (const k of servicesOfPod(services.store, ps))
        controller.queue.addAfter(k, ctx.options.endpointUpdatesBatchPeriodMs);
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
