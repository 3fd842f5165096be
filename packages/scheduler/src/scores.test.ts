import type { Pod } from '@svc/api';
import { fitErrorMessage } from './fit-error.js';
import { NodeInfo } from './node-info.js';
import { SCORES, normalize, scoreNodes, selectHost } from './scores.js';
import { nodeObject, podObject, type NodeSpec, type PodSpecInput } from './scheduler-testing.js';

function info(name: string, spec: NodeSpec = {}, pods: Pod[] = []): NodeInfo {
  const n = new NodeInfo(name);
  n.node = nodeObject(name, spec);
  pods.forEach((p, i) => n.addPod(`uid-${i}`, p));
  return n;
}
const pod = (o: PodSpecInput = {}): Pod => podObject('p', o);
const plugin = (name: string) => SCORES.filter((s) => s.name === name);

describe('scores', () => {
  it("weights as Kubernetes' default profile", () => {
    expect(SCORES.map((s) => [s.name, s.weight])).toEqual([
      ['TaintToleration', 3],
      ['NodeAffinity', 2],
      ['NodeResourcesFit', 1],
      ['NodeResourcesBalancedAllocation', 1],
    ]);
  });

  it('DefaultNormalizeScore', () => {
    expect(normalize([0, 5, 10], false)).toEqual([0, 50, 100]);
    expect(normalize([0, 1, 3], true)).toEqual([100, 67, 0]);
    expect(normalize([0, 0], true)).toEqual([100, 100]);
    expect(normalize([0, 0], false)).toEqual([0, 0]);
  });

  it('least allocated: the free share after placing the pod, unset requests counted as 100m / 200Mi', () => {
    const nodes = [
      info('a', { cpu: '4', memory: '8Gi' }),
      info('b', { cpu: '4', memory: '8Gi' }, [pod({ cpu: '2', memory: '4Gi' })]),
    ];
    expect(scoreNodes(pod({ cpu: '1', memory: '2Gi' }), nodes, plugin('NodeResourcesFit'))).toEqual([75, 25]);
    // (4000 - 100) * 100 / 4000 = 97, (8192 - 200) * 100 / 8192 = 97
    expect(scoreNodes(pod(), [info('c', { cpu: '4', memory: '8Gi' })], plugin('NodeResourcesFit'))).toEqual([97]);
  });

  it('balanced allocation: 100 × (1 − |cpu fraction − memory fraction| / 2); skipped for pods without requests', () => {
    const nodes = [
      info('a', { cpu: '4', memory: '4Gi' }),
      info('b', { cpu: '4', memory: '4Gi' }, [pod({ memory: '2Gi' })]),
    ];
    expect(scoreNodes(pod({ cpu: '2', memory: '2Gi' }), nodes, plugin('NodeResourcesBalancedAllocation'))).toEqual([
      100, 75,
    ]);
    expect(scoreNodes(pod(), nodes, plugin('NodeResourcesBalancedAllocation'))).toEqual([0, 0]);
  });

  it('taint toleration: untolerated PreferNoSchedule taints score lower; node affinity: matched preferred weights', () => {
    const nodes = [
      info('a', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }], labels: { disk: 'ssd' } }),
      info('b'),
    ];
    expect(scoreNodes(pod(), nodes, plugin('TaintToleration'))).toEqual([0, 300]);
    expect(
      scoreNodes(
        pod({ tolerations: [{ key: 'x', operator: 'Exists', effect: 'PreferNoSchedule' }] }),
        nodes,
        plugin('TaintToleration'),
      ),
    ).toEqual([300, 300]);
    const preferred = pod({
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
          ],
        },
      },
    });
    expect(scoreNodes(preferred, nodes, plugin('NodeAffinity'))).toEqual([200, 0]);
  });

  it('selectHost takes the highest total and breaks ties at random', () => {
    expect(selectHost([1, 5, 3])).toBe(1);
    const picks = new Set<number>();
    for (let i = 0; i < 200; i++) picks.add(selectHost([7, 2, 7, 7]));
    expect([...picks].sort()).toEqual([0, 2, 3]);
  });
});

describe('the FailedScheduling message', () => {
  it('counts reasons over nodes, sorted, then what preemption would say', () => {
    const statuses = [
      {
        plugin: 'TaintToleration',
        code: 'UnschedulableAndUnresolvable' as const,
        reasons: ['node(s) had untolerated taint {node-role: }'],
      },
      { plugin: 'NodeResourcesFit', code: 'Unschedulable' as const, reasons: ['Insufficient cpu'] },
      {
        plugin: 'NodeResourcesFit',
        code: 'Unschedulable' as const,
        reasons: ['Insufficient cpu', 'Insufficient memory'],
      },
    ];
    expect(fitErrorMessage(pod(), statuses)).toBe(
      '0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {node-role: }, 2 Insufficient cpu. ' +
        'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    );
    const never = pod();
    never.spec.preemptionPolicy = 'Never';
    expect(fitErrorMessage(never, statuses.slice(0, 1))).toBe(
      '0/1 nodes are available: 1 node(s) had untolerated taint {node-role: }. preemption: not eligible due to preemptionPolicy=Never.',
    );
  });
});
