// ttl-controller against a real API server and etcd: the node.alpha.svc.io/ttl annotation follows
// the cluster's size through Kubernetes' boundaries table (with its hysteresis), on Node objects
// created through the API (no node agents run), and is put back when someone changes it.
import { group, nodeTtlAnnotation, type ApiObject, type Node } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { TTL_BOUNDARIES, ttlStep } from './ttl.js';

const env = withControllerManager(['--controllers=ttl']);
const nodes = (): ResourceClient<Node> => new ResourceClient<Node>(env.api, R.nodes());
const prefix = uniqueName('ttl');
let created = 0;

/** Creates `count` more nodes (ten at a time); resolves with their names. */
async function addNodes(count: number): Promise<string[]> {
  const names = Array.from({ length: count }, () => `${prefix}-${created++}`);
  for (let i = 0; i < names.length; i += 10)
    await Promise.all(
      names.slice(i, i + 10).map((name) => nodes().create({ apiVersion: 'v1', kind: 'Node', metadata: { name } })),
    );
  return names;
}

async function deleteNodes(names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 10) await Promise.all(names.slice(i, i + 10).map((n) => nodes().delete(n)));
}

const ttlOf = (n: Node): string | undefined => n.metadata.annotations?.[nodeTtlAnnotation()];

/** Waits until every node has the annotation `value`; resolves with how many there are. */
const allAt = (value: string): Promise<number> =>
  waitFor(
    `every node annotated ${nodeTtlAnnotation()}=${value}`,
    async () => {
      const items = (await nodes().list()).items;
      return items.length > 0 && items.every((n) => ttlOf(n) === value) ? items.length : undefined;
    },
    // About a hundred patches: generous under load.
    { timeoutMs: 60_000, intervalMs: 200 },
  );

describe('the ttl boundaries table', () => {
  it('steps up above sizeMax and down only below the next step sizeMin', () => {
    expect(TTL_BOUNDARIES.map((b) => b.ttlSeconds)).toEqual([0, 15, 30, 60, 300]);
    expect(ttlStep(0, 100)).toBe(0);
    expect(ttlStep(0, 101)).toBe(1);
    expect(ttlStep(1, 95)).toBe(1);
    expect(ttlStep(1, 90)).toBe(1);
    expect(ttlStep(1, 89)).toBe(0);
    expect(ttlStep(1, 501)).toBe(2);
    expect(ttlStep(2, 460)).toBe(2);
    expect(ttlStep(0, 5000)).toBe(4);
    expect(ttlStep(4, 1800)).toBe(4);
    expect(ttlStep(4, 1799)).toBe(3);
    expect(ttlStep(4, 0)).toBe(0);
  });
});

describe('ttl-controller', () => {
  it('annotates every node with 0 s up to 100 nodes, 15 s above, and keeps 15 s down to 90 nodes', async () => {
    const first = await addNodes(3);
    expect(await allAt('0')).toBe(3);

    const more = await addNodes(98);
    expect(await allAt('15')).toBe(101);

    // 95 nodes: still above the 15 s step's sizeMin, so a new node (96) gets 15 too.
    await deleteNodes(more.slice(0, 6));
    const [probe] = await addNodes(1);
    const annotated = await waitFor('the new node annotated', async () => ttlOf(await nodes().get(probe ?? '')), {
      timeoutMs: 30_000,
    });
    expect(annotated).toBe('15');

    // 89 nodes: below 90, back to 0 s on every node.
    await deleteNodes(more.slice(6, 13));
    expect(await allAt('0')).toBe(89);
    expect(first.length).toBe(3);
  }, 180_000);

  it('puts a changed annotation back', async () => {
    const [name = ''] = await addNodes(1);
    await waitFor('the node annotated', async () => ttlOf(await nodes().get(name)) === '0', { timeoutMs: 30_000 });
    await nodes().patch(name, { metadata: { annotations: { [nodeTtlAnnotation()]: '42' } } }, { type: 'merge' });
    await waitFor('the annotation put back', async () => ttlOf(await nodes().get(name)) === '0', {
      timeoutMs: 30_000,
    });
  });

  it("has Kubernetes' ClusterRole system:controller:ttl-controller", async () => {
    const roles = new ResourceClient<ApiObject>(env.api, {
      group: group('rbac.authorization'),
      version: 'v1',
      resource: 'clusterroles',
    });
    const role = (await roles.get('system:controller:ttl-controller')) as ApiObject & { rules?: unknown[] };
    expect(role.rules).toEqual([
      { verbs: ['update', 'patch', 'list', 'watch'], apiGroups: [''], resources: ['nodes'] },
      expect.objectContaining({ verbs: ['create', 'patch', 'update'], resources: ['events'] }),
    ]);
  });
});
