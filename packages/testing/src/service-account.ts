import { dynamicResource, type RestClient } from '@svc/client';
import { HttpsClient } from './https-client.js';

/**
 * Creates the `default` ServiceAccount of `namespace` through an admin's `client`, as the
 * controller manager does for every namespace: the ServiceAccount admission plugin refuses pods
 * in a namespace without it. An account that exists already is kept.
 */
export async function createDefaultServiceAccount(client: HttpsClient | RestClient, namespace: string): Promise<void> {
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } };
  if (client instanceof HttpsClient) {
    const r = await client.post(`/api/v1/namespaces/${namespace}/serviceaccounts`, account);
    if (r.status !== 201 && r.status !== 409) throw new Error(`creating ${namespace}/default: ${r.status} ${r.text}`);
    return;
  }
  const accounts = dynamicResource(client, { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true });
  await accounts
    .namespace(namespace)
    .create(account)
    .catch((e: unknown) => {
      if ((e as { code?: number }).code !== 409) throw e;
    });
}
