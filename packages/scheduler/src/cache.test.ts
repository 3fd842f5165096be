import type { Node, Pod, PodPhase } from '@svc/api';
import { SchedulerCache } from './cache.js';

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { allocatable: { cpu: '1', pods: '10' } },
});
const pod = (uid: string, nodeName?: string, phase?: PodPhase): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: uid, namespace: 'ns', uid },
  spec: { nodeName, containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] },
  status: { phase },
});
const cpuOn = (c: SchedulerCache, name: string): number | undefined =>
  c
    .nodes()
    .find((n) => n.name === name)
    ?.requested.get('cpu') ?? 0;

describe('the scheduler cache', () => {
  it('counts bound pods on their node; ended pods and unbound pods do not count', () => {
    const c = new SchedulerCache();
    c.setNode(node('a'));
    c.setPod(pod('1', 'a'));
    c.setPod(pod('2', 'a', 'Succeeded'));
    c.setPod(pod('3'));
    expect(cpuOn(c, 'a')).toBe(100);
    c.setPod(pod('1', 'a', 'Failed'));
    expect(cpuOn(c, 'a')).toBe(0);
  });

  it('an assumed pod counts until confirmed (anywhere), forgotten, or deleted; an informer update without nodeName keeps it', () => {
    const c = new SchedulerCache();
    c.setNode(node('a'));
    c.setNode(node('b'));
    const p = pod('1');
    c.assume(p, 'a');
    expect(c.isAssumed('1')).toBe(true);
    expect(cpuOn(c, 'a')).toBe(100);
    c.setPod(p);
    expect(cpuOn(c, 'a')).toBe(100);
    c.setPod(pod('1', 'b'));
    expect(c.isAssumed('1')).toBe(false);
    expect([cpuOn(c, 'a'), cpuOn(c, 'b')]).toEqual([0, 100]);
    c.assume(pod('2'), 'a');
    c.forget(pod('2'));
    expect(cpuOn(c, 'a')).toBe(0);
    c.removePod(pod('1', 'b'));
    expect(cpuOn(c, 'b')).toBe(0);
  });

  it('pods on a node that does not exist (yet) are kept; only existing nodes are offered', () => {
    const c = new SchedulerCache();
    c.setPod(pod('1', 'later'));
    expect(c.nodes()).toEqual([]);
    c.setNode(node('later'));
    expect(cpuOn(c, 'later')).toBe(100);
    c.removeNode(node('later'));
    expect(c.nodes()).toEqual([]);
  });
});
