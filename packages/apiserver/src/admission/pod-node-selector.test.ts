// PodNodeSelector: namespace node selectors merged into pods, conflicts and whitelists refused.
import type { ApiObject, Pod } from '@svc/api';
import { ConfigurationError } from '../options.js';
import { parsePodNodeSelectorConfig, PodNodeSelector, selectorToLabels } from './pod-node-selector.js';
import { attributes, failure, podObject } from './admission-testing.js';

const ANNOTATION = 'scheduler.alpha.svc.io/node-selector';
const namespaces: Record<string, ApiObject> = {
  annotated: { metadata: { name: 'annotated', annotations: { [ANNOTATION]: 'env=prod, tier=web' } } },
  empty: { metadata: { name: 'empty', annotations: { [ANNOTATION]: '' } } },
  plain: { metadata: { name: 'plain' } },
  broken: { metadata: { name: 'broken', annotations: { [ANNOTATION]: 'env' } } },
};

const plugin = (config: Record<string, string> = {}): PodNodeSelector =>
  new PodNodeSelector({ getNamespace: async (name) => namespaces[name], config });

async function admitted(p: PodNodeSelector, namespace: string, nodeSelector?: Record<string, string>): Promise<Pod> {
  const a = attributes({
    resource: 'pods',
    namespace,
    object: podObject(nodeSelector ? { nodeSelector } : {}, { namespace }),
  });
  await p.admit(a);
  await p.validate(a);
  return a.object as Pod;
}

it('parses selectors as Kubernetes does', () => {
  expect(selectorToLabels(' a = b ,c=d')).toEqual({ a: 'b', c: 'd' });
  expect(selectorToLabels('')).toEqual({});
  expect(() => selectorToLabels('a=b=c')).toThrow('invalid selector: [a b c]');
  expect(() => selectorToLabels('a b=c')).toThrow(': Invalid value: "a b": name part must consist of');
});

it('merges the namespace selector (else the cluster default) under the pod own labels', async () => {
  const p = plugin({ clusterDefaultNodeSelector: 'pool=default' });
  expect((await admitted(p, 'annotated', { disk: 'ssd' })).spec.nodeSelector).toEqual({
    env: 'prod',
    tier: 'web',
    disk: 'ssd',
  });
  expect((await admitted(p, 'plain')).spec.nodeSelector).toEqual({ pool: 'default' });
  // An empty annotation is a selector too: no default.
  expect((await admitted(p, 'empty')).spec.nodeSelector).toBeUndefined();
});

it('refuses a pod selector that contradicts the namespace one', async () => {
  const s = await failure(admitted(plugin(), 'annotated', { env: 'dev' }));
  expect([s.code, s.message]).toEqual([
    403,
    'pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector',
  ]);
});

it('refuses labels outside the namespace whitelist of the configuration', async () => {
  const p = plugin({ annotated: 'env=prod,tier=web,disk=ssd' });
  await admitted(p, 'annotated', { disk: 'ssd' });
  const s = await failure(admitted(p, 'annotated', { disk: 'hdd' }));
  expect(s.message).toBe('pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist');
});

it('answers bad selectors and a missing namespace as Kubernetes does', async () => {
  const s = await failure(admitted(plugin(), 'broken'));
  expect([s.code, s.reason, s.message]).toEqual([500, undefined, 'invalid selector: [env]']);
  const m = await failure(admitted(plugin(), 'missing'));
  expect([m.code, m.message]).toEqual([500, 'Internal error occurred: namespace missing does not exist']);
});

it('leaves updates and subresources alone', async () => {
  const p = plugin();
  const a = attributes({
    resource: 'pods',
    operation: 'UPDATE',
    namespace: 'annotated',
    object: podObject({}, { namespace: 'annotated' }),
    oldObject: podObject(),
  });
  await p.admit(a);
  expect((a.object as Pod).spec.nodeSelector).toBeUndefined();
});

it('reads the configuration map (its key in any case) and refuses other shapes', () => {
  expect(parsePodNodeSelectorConfig(undefined)).toEqual({});
  expect(parsePodNodeSelectorConfig({ PodNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'a=b' } })).toEqual({
    clusterDefaultNodeSelector: 'a=b',
  });
  expect(() => parsePodNodeSelectorConfig({ podNodeSelectorPluginConfig: { ns: 1 } })).toThrow(ConfigurationError);
  expect(() => parsePodNodeSelectorConfig({ podNodeSelectorPluginConfig: ['x'] })).toThrow(
    '--admission-control-config-file: PodNodeSelector: podNodeSelectorPluginConfig must be a map of strings',
  );
});
