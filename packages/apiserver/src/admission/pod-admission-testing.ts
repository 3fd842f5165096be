import {
  createDefaultServiceAccount,
  createNamespace,
  uniqueName,
  type HttpResponse,
  type HttpsClient,
} from '@svc/testing';

/** A fresh namespace with its default ServiceAccount (the ServiceAccount plugin refuses pods without one). */
export async function podNamespace(client: HttpsClient, prefix: string): Promise<string> {
  const ns = await createNamespace(client, prefix);
  await createDefaultServiceAccount(client, ns);
  return ns;
}

/** POSTs a one-container busybox pod that mounts no token, with `spec` merged over it. */
export function postPod(
  client: HttpsClient,
  o: { namespace: string; spec: object; name?: string },
): Promise<HttpResponse> {
  return client.post(`/api/v1/namespaces/${o.namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name ?? uniqueName('p') },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }], ...o.spec },
  });
}
