import { readFileSync } from 'node:fs';
import { isAlreadyExists, isConflict, isNotFound, naming, type ConfigMap, type Namespace } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

/** The root CA to publish: `--root-ca-file`, else the CA the manager trusts the API server with. */
function rootCa(rootCaFile: string | undefined, clientCa: string | undefined): string {
  if (rootCaFile) return readFileSync(rootCaFile, 'utf8');
  if (clientCa) return clientCa;
  throw new Error('no root CA: set --root-ca-file or give the svcconfig a certificate authority');
}

/**
 * `root-ca-certificate-publisher-controller`: every active namespace has the root CA
 * ConfigMap (`svc-root-ca.crt`) with data `ca.crt`; a changed or deleted one is put back.
 */
export const rootCaCertPublisher: ControllerDefinition = {
  name: 'root-ca-certificate-publisher-controller',
  build(ctx) {
    const ca = rootCa(ctx.options.rootCaFile, ctx.client.config.caPem);
    const name = naming().rootCaConfigMap;
    const namespaces = informer<Namespace>(ctx, R.namespaces());
    const configMaps = informer<ConfigMap>(ctx, R.configMaps());
    const api = new ResourceClient<ConfigMap>(ctx.client, R.configMaps());
    const annotations = {
      [`${naming().labelPrefix}/description`]:
        "Contains a CA bundle that can be used to verify the API server's certificate. Its content changes when the CA is rotated.",
    };
    const controller = newController(ctx, {
      name: 'root-ca-certificate-publisher-controller',
      queueName: 'root_ca_cert_publisher',
      reconcile: async (ns) => {
        const namespace = namespaces.store.get(ns);
        if (!namespace || namespace.metadata.deletionTimestamp) return;
        const cm = configMaps.store.get(`${ns}/${name}`);
        try {
          if (!cm) {
            await api.namespace(ns).create({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, namespace: ns, annotations },
              data: { 'ca.crt': ca },
            });
          } else if (cm.data?.['ca.crt'] !== ca || Object.keys(cm.data ?? {}).length !== 1) {
            await api.namespace(ns).update({
              ...cm,
              metadata: { ...cm.metadata, annotations: { ...cm.metadata.annotations, ...annotations } },
              data: { 'ca.crt': ca },
            });
          }
        } catch (e) {
          if (isAlreadyExists(e) || isConflict(e)) return { requeueAfter: 0 };
          if (!isNotFound(e)) throw e;
        }
        return undefined;
      },
    });
    controller.watch(namespaces, (n) => [n.metadata.name ?? '']);
    controller.watch(configMaps, (c) => (c.metadata.name === name ? [c.metadata.namespace ?? ''] : []));
    return controller;
  },
};
