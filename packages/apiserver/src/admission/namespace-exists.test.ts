// NamespaceExists: objects only in namespaces that exist.
import type { ApiObject } from '@svc/api';
import { NamespaceExists } from './namespace-exists.js';
import { attributes, failure } from './admission-testing.js';

const plugin = new NamespaceExists(async (name) => (name === 'here' ? { metadata: { name } } : undefined));
const configMap = (namespace: string): ApiObject => ({ metadata: { name: 'c', namespace } });

it('refuses creates, updates and deletes in a missing namespace with a 404', async () => {
  await plugin.validate(attributes({ resource: 'configmaps', object: configMap('here') }));
  for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
    const s = await failure(
      plugin.validate(
        attributes({ resource: 'configmaps', operation, object: configMap('gone'), oldObject: configMap('gone') }),
      ),
    );
    expect([s.code, s.reason, s.message]).toEqual([404, 'NotFound', 'namespaces "gone" not found']);
  }
});

it('does not check namespaces themselves or cluster-scoped objects', async () => {
  await plugin.validate(attributes({ resource: 'namespaces', object: { metadata: { name: 'gone' } } }));
  await plugin.validate(attributes({ resource: 'nodes', object: { metadata: { name: 'n' } } }));
});

it('answers a failed read as a 500', async () => {
  const broken = new NamespaceExists(() => Promise.reject(new Error('etcd is down')));
  const s = await failure(broken.validate(attributes({ resource: 'configmaps', object: configMap('x') })));
  expect([s.code, s.message]).toEqual([500, 'Internal error occurred: etcd is down']);
});
