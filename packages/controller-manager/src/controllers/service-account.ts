import { isAlreadyExists, isNotFound, type Namespace, type ServiceAccount } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

const DEFAULT_ACCOUNT = 'default';

/**
 * `serviceaccount-controller`: every active namespace has a `default` ServiceAccount; one
 * that is deleted is made again (not in a terminating namespace).
 */
export const serviceAccountController: ControllerDefinition = {
  name: 'serviceaccount-controller',
  build(ctx) {
    const namespaces = informer<Namespace>(ctx, R.namespaces());
    const accounts = informer<ServiceAccount>(ctx, R.serviceAccounts());
    const api = new ResourceClient<ServiceAccount>(ctx.client, R.serviceAccounts());
    const controller = newController(ctx, {
      name: 'serviceaccount-controller',
      queueName: 'serviceaccount',
      reconcile: async (ns) => {
        const namespace = namespaces.store.get(ns);
        if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return;
        if (accounts.store.get(`${ns}/${DEFAULT_ACCOUNT}`)) return;
        try {
          await api
            .namespace(ns)
            .create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_ACCOUNT, namespace: ns } });
        } catch (e) {
          // Already there (the cache is behind), or the namespace went away meanwhile.
          if (!isAlreadyExists(e) && !isNotFound(e)) throw e;
        }
      },
    });
    controller.watch(namespaces, (n) => [n.metadata.name ?? '']);
    controller.watch(accounts, (sa) => (sa.metadata.name === DEFAULT_ACCOUNT ? [sa.metadata.namespace ?? ''] : []));
    return controller;
  },
};
