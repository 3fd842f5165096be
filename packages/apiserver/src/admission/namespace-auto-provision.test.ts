// NamespaceAutoProvision: a missing namespace is created before the object in it.
import { alreadyExists, forbidden, type ApiObject } from '@svc/api';
import { NamespaceAutoProvision } from './namespace-auto-provision.js';
import { attributes, failure } from './admission-testing.js';

function setup(o: { existing?: string[]; createError?: Error } = {}): {
  plugin: NamespaceAutoProvision;
  created: ApiObject[];
} {
  const created: ApiObject[] = [];
  const plugin = new NamespaceAutoProvision({
    getNamespace: async (name) => ((o.existing ?? []).includes(name) ? { metadata: { name } } : undefined),
    createNamespace: async (ns) => {
      if (o.createError) throw o.createError;
      created.push(ns);
    },
  });
  return { plugin, created };
}

const configMap = (namespace: string): ApiObject => ({ metadata: { name: 'c', namespace } });

it('creates the missing namespace of a created object', async () => {
  const { plugin, created } = setup({ existing: ['here'] });
  await plugin.admit(attributes({ resource: 'configmaps', object: configMap('new') }));
  await plugin.admit(attributes({ resource: 'configmaps', object: configMap('here') }));
  expect(created).toEqual([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new' } }]);
});

it('creates nothing for dry runs, updates, namespaces and cluster-scoped objects', async () => {
  const { plugin, created } = setup();
  await plugin.admit(attributes({ resource: 'configmaps', object: configMap('new'), dryRun: true }));
  await plugin.admit(
    attributes({ resource: 'configmaps', operation: 'UPDATE', object: configMap('new'), oldObject: configMap('new') }),
  );
  await plugin.admit(attributes({ resource: 'namespaces', object: { metadata: { name: 'x' } } }));
  await plugin.admit(attributes({ resource: 'nodes', object: { metadata: { name: 'n' } } }));
  expect(created).toEqual([]);
});

it('takes a namespace created meanwhile; any other failure is a 403', async () => {
  await setup({ createError: alreadyExists({ group: '', resource: 'namespaces' }, 'new') }).plugin.admit(
    attributes({ resource: 'configmaps', object: configMap('new') }),
  );
  const s = await failure(
    setup({ createError: new Error('etcd is down') }).plugin.admit(
      attributes({ resource: 'configmaps', object: configMap('new') }),
    ),
  );
  expect([s.code, s.message]).toEqual([403, 'configmaps "c" is forbidden: etcd is down']);
  const f = forbidden('namespaces "new" is forbidden: nope');
  expect(
    (
      await failure(
        setup({ createError: f }).plugin.admit(attributes({ resource: 'configmaps', object: configMap('new') })),
      )
    ).message,
  ).toBe('namespaces "new" is forbidden: nope');
});
