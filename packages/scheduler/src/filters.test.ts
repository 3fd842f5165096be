import type { ContainerPort, Pod, Taint } from '@svc/api';
import { FILTERS, podState, runFilters, toleratesTaint } from './filters.js';
import { NodeInfo } from './node-info.js';
import { nodeObject, podObject, type NodeSpec, type PodSpecInput } from './scheduler-testing.js';

function info(name: string, spec: NodeSpec = {}, pods: Pod[] = []): NodeInfo {
  const n = new NodeInfo(name);
  n.node = nodeObject(name, spec);
  pods.forEach((p, i) => n.addPod(`uid-${i}`, p));
  return n;
}
const pod = (o: PodSpecInput = {}): Pod => podObject('p', o);
const reasons = (p: Pod, n: NodeInfo): string[] => runFilters(podState(p), n)?.reasons ?? [];

describe('filters', () => {
  it("run in Kubernetes' order and stop at the first that refuses", () => {
    expect(FILTERS.map((f) => f.name)).toEqual([
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodePorts',
      'NodeResourcesFit',
    ]);
    const n = info('n', { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }], labels: {} });
    expect(runFilters(podState(pod({ nodeSelector: { a: 'b' } })), n)).toEqual({
      plugin: 'NodeUnschedulable',
      code: 'UnschedulableAndUnresolvable',
      reasons: ['node(s) were unschedulable'],
    });
  });

  it('toleration matching: empty effect/key match any, Exists ignores the value, empty operator is Equal', () => {
    const taint: Taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
    expect(toleratesTaint({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', value: 'v' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', value: 'w' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'k', operator: 'Exists' }, taint)).toBe(true);
    expect(toleratesTaint({ operator: 'Exists' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'k', operator: 'Bogus' }, taint)).toBe(false);
  });

  it('taints: NoSchedule and NoExecute refuse, PreferNoSchedule does not; the first untolerated one is named', () => {
    const n = info('n', {
      taints: [
        { key: 'soft', value: 'x', effect: 'PreferNoSchedule' },
        { key: 'a', value: '1', effect: 'NoExecute' },
        { key: 'b', effect: 'NoSchedule' },
      ],
    });
    expect(reasons(pod(), n)).toEqual(['node(s) had untolerated taint {a: 1}']);
    expect(reasons(pod({ tolerations: [{ key: 'a', operator: 'Exists' }] }), n)).toEqual([
      'node(s) had untolerated taint {b: }',
    ]);
    expect(
      reasons(
        pod({
          tolerations: [
            { key: 'a', operator: 'Exists' },
            { key: 'b', operator: 'Exists', effect: 'NoSchedule' },
          ],
        }),
        n,
      ),
    ).toEqual([]);
  });

  it('unschedulable nodes, unless the unschedulable NoSchedule taint is tolerated', () => {
    const n = info('n', { unschedulable: true });
    expect(reasons(pod(), n)).toEqual(['node(s) were unschedulable']);
    expect(
      reasons(
        pod({ tolerations: [{ key: 'node.svc.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }),
        n,
      ),
    ).toEqual([]);
    expect(reasons(pod({ tolerations: [{ operator: 'Exists' }] }), n)).toEqual([]);
  });

  it('nodeName: a pod naming another node does not fit', () => {
    const p = pod();
    (p.spec ?? {}).nodeName = 'other';
    expect(reasons(p, info('n'))).toEqual(["node(s) didn't match the requested node name"]);
  });

  it('node affinity: nodeSelector and required terms with every operator', () => {
    const n = info('n1', { labels: { zone: 'a', gen: '3', gpu: '' } });
    const req = (...terms: object[]): Pod =>
      pod({
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
      });
    const fits = (p: Pod): boolean => reasons(p, n).length === 0;
    expect(fits(pod({ nodeSelector: { zone: 'a' } }))).toBe(true);
    expect(fits(pod({ nodeSelector: { zone: 'a', gen: '4' } }))).toBe(false);
    const e = (key: string, operator: string, values?: string[]) => ({ matchExpressions: [{ key, operator, values }] });
    expect(fits(req(e('zone', 'In', ['a', 'b'])))).toBe(true);
    expect(fits(req(e('zone', 'In', ['b'])))).toBe(false);
    expect(fits(req(e('zone', 'NotIn', ['b'])))).toBe(true);
    expect(fits(req(e('missing', 'NotIn', ['b'])))).toBe(true);
    expect(fits(req(e('gpu', 'Exists')))).toBe(true);
    expect(fits(req(e('gpu', 'DoesNotExist')))).toBe(false);
    expect(fits(req(e('gen', 'Gt', ['2'])))).toBe(true);
    expect(fits(req(e('gen', 'Gt', ['3'])))).toBe(false);
    expect(fits(req(e('gen', 'Lt', ['4'])))).toBe(true);
    expect(fits(req(e('zone', 'Lt', ['4'])))).toBe(false);
    expect(fits(req(e('gen', 'Gt', ['2', '3'])))).toBe(false);
    expect(fits(req(e('zone', 'Bogus', ['a'])))).toBe(false);
    expect(fits(req({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }))).toBe(true);
    expect(fits(req({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }))).toBe(false);
    expect(fits(req({}))).toBe(false);
    expect(fits(req(e('zone', 'In', ['x']), e('gen', 'Exists')))).toBe(true);
    expect(
      fits(req({ ...e('zone', 'In', ['a']), matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] })),
    ).toBe(false);
    expect(reasons(pod({ nodeSelector: { zone: 'z' } }), n)).toEqual([
      "node(s) didn't match Pod's node affinity/selector",
    ]);
  });

  it('host ports conflict on protocol and port when the IPs are equal or either is 0.0.0.0', () => {
    const withPort = (hostPort: number, hostIP?: string, protocol?: ContainerPort['protocol']): Pod => {
      const p = pod();
      const c = p.spec?.containers?.[0];
      if (c) c.ports = [{ containerPort: 80, hostPort, hostIP, protocol }];
      return p;
    };
    const n = info('n', {}, [withPort(8080, '10.0.0.1')]);
    expect(reasons(withPort(8080), n)).toEqual(["node(s) didn't have free ports for the requested pod ports"]);
    expect(reasons(withPort(8080, '10.0.0.1'), n)).toHaveLength(1);
    expect(reasons(withPort(8080, '10.0.0.2'), n)).toEqual([]);
    expect(reasons(withPort(8080, undefined, 'UDP'), n)).toEqual([]);
    expect(reasons(withPort(8081), n)).toEqual([]);
    expect(runFilters(podState(withPort(8080)), n)?.code).toBe('Unschedulable');
  });

  it("resources: requests against allocatable minus the node's pods; zero requests always fit; one more pod than allowed is too many", () => {
    const n = info('n', { cpu: '2', memory: '1Gi', pods: '3' }, [pod({ cpu: '1500m', memory: '512Mi' })]);
    expect(reasons(pod({ cpu: '500m', memory: '512Mi' }), n)).toEqual([]);
    expect(reasons(pod({ cpu: '501m', memory: '513Mi' }), n)).toEqual(['Insufficient cpu', 'Insufficient memory']);
    expect(reasons(pod(), info('full', { cpu: '1' }, [pod({ cpu: '2' })]))).toEqual([]);
    expect(reasons(pod(), info('few', { pods: '1' }, [pod()]))).toEqual(['Too many pods']);
    const gpu = pod();
    const c = gpu.spec?.containers?.[0];
    if (c) c.resources = { limits: { 'example.com/gpu': '1' } };
    expect(reasons(gpu, n)).toEqual(['Insufficient example.com/gpu']);
    expect(runFilters(podState(gpu), n)?.code).toBe('Unschedulable');
  });
});

describe('pod requests', () => {
  it('sum containers, take the largest init container (with sidecars before it), add overhead; limits stand in for missing requests', () => {
    const p: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '100m' } } },
          { name: 'b', resources: { limits: { cpu: '200m', memory: '1Mi' } } },
        ],
        initContainers: [
          { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
          { name: 'init', resources: { requests: { cpu: '1', memory: '2Mi' } } },
        ],
        overhead: { cpu: '10m' },
      },
    };
    const n = new NodeInfo('n');
    n.addPod('u', p);
    expect(Object.fromEntries(n.requested)).toEqual({ cpu: 1060, memory: 2 * 2 ** 20 });
    expect(Object.fromEntries(n.nonZeroRequested)).toEqual({
      cpu: 1060,
      memory: 200 * 2 ** 20 + 2 ** 20 + 200 * 2 ** 20,
    });
  });
});
