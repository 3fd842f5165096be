// TaintNodesByCondition: new Nodes get the not-ready NoSchedule taint, once.
import { useNaming, type Node } from '@svc/api';
import { TaintNodesByCondition } from './taint-nodes-by-condition.js';
import { attributes } from './admission-testing.js';

const node = (taints?: Node['spec']): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n' },
  spec: taints,
});

async function admitted(n: Node, o: { operation?: 'CREATE' | 'UPDATE'; subresource?: string } = {}): Promise<Node> {
  const a = attributes({
    resource: 'nodes',
    object: n,
    oldObject: o.operation === 'UPDATE' ? node() : undefined,
    ...o,
  });
  await new TaintNodesByCondition().admit(a);
  return a.object as Node;
}

afterEach(() => useNaming('svc'));

it('adds node.<prefix>/not-ready:NoSchedule to a created node, after its own taints', async () => {
  expect((await admitted(node())).spec?.taints).toEqual([{ key: 'node.svc.io/not-ready', effect: 'NoSchedule' }]);
  const own = { key: 'dedicated', value: 'gpu', effect: 'NoExecute' as const };
  expect((await admitted(node({ taints: [own] }))).spec?.taints).toEqual([
    own,
    { key: 'node.svc.io/not-ready', effect: 'NoSchedule' },
  ]);
  useNaming('kubernetes');
  expect((await admitted(node())).spec?.taints).toEqual([
    { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
  ]);
});

it('keeps a node that has the taint (same key and effect, any value) as it is', async () => {
  const has = node({ taints: [{ key: 'node.svc.io/not-ready', value: 'x', effect: 'NoSchedule' }] });
  expect((await admitted(structuredClone(has))).spec).toEqual(has.spec);
  const otherEffect = node({ taints: [{ key: 'node.svc.io/not-ready', effect: 'NoExecute' }] });
  expect((await admitted(otherEffect)).spec?.taints).toHaveLength(2);
});

it('leaves updates, status writes and other resources alone', async () => {
  expect((await admitted(node(), { operation: 'UPDATE' })).spec).toBeUndefined();
  expect((await admitted(node(), { subresource: 'status' })).spec).toBeUndefined();
  const a = attributes({ resource: 'pods', object: { metadata: { name: 'p' } } });
  await new TaintNodesByCondition().admit(a);
  expect(a.object).toEqual({ metadata: { name: 'p' } });
});
