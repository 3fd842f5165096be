// DenyServiceExternalIPs: no new externalIPs on Services.
import type { ApiObject } from '@svc/api';
import { DenyServiceExternalIPs } from './deny-service-external-ips.js';
import { attributes, failure } from './admission-testing.js';

const svc = (externalIPs?: string[]): ApiObject => ({
  metadata: { name: 's', namespace: 'ns' },
  spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) },
});
const check = (object: ApiObject, oldObject?: ApiObject, subresource = ''): Promise<void> =>
  new DenyServiceExternalIPs().validate(
    attributes({ resource: 'services', operation: oldObject ? 'UPDATE' : 'CREATE', object, oldObject, subresource }),
  );

it('refuses a create with external IPs with Kubernetes message', async () => {
  const s = await failure(check(svc(['203.0.113.1'])));
  expect([s.code, s.message]).toEqual([
    403,
    'services "s" is forbidden: Use of external IPs is denied by admission control',
  ]);
  await check(svc());
  await check(svc([]));
});

it('allows an update to keep or drop external IPs, not to add one', async () => {
  const old = svc(['203.0.113.1', '203.0.113.2']);
  await check(svc(['203.0.113.2']), old);
  await check(svc(), old);
  await check(svc(['203.0.113.2', '203.0.113.1']), old);
  expect((await failure(check(svc(['203.0.113.1', '203.0.113.3']), old))).code).toBe(403);
  expect((await failure(check(svc(['203.0.113.9']), svc()))).code).toBe(403);
  await check(svc(['203.0.113.9']), svc(), 'status');
});
