import { dynamicResource, type RestClient } from '@svc/client';
import { expectCode, uniqueName } from './api-assertions.js';
import { HttpsClient } from './https-client.js';

/**
 * Creates a namespace named `uniqueName(prefix)` through `client` (an admin's: a test server's
 * `HttpsClient` or an `@svc/client` `RestClient`) and returns its name; rejects unless it is created.
 */
export async function createNamespace(client: HttpsClient | RestClient, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
  if (client instanceof HttpsClient) expectCode(await client.post('/api/v1/namespaces', namespace), 201);
  else await dynamicResource(client, { group: '', version: 'v1', resource: 'namespaces' }).create(namespace);
  return name;
}
