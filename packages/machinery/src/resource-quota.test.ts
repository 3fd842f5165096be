import type { Pod, ResourceQuota } from '@svc/api';
import { computePodQos, podLimits, podRequests, resourceListOf } from './pod-resources.js';
import {
  QuotaRejection,
  calculateQuotaUsage,
  checkQuotaRequest,
  quotaEvaluatorFor,
  trackedGroupResources,
} from './resource-quota.js';

function pod(spec: Partial<Pod['spec']>, status?: Pod['status']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [], ...spec },
    status,
  };
}

function quota(
  hard: Record<string, string>,
  used: Record<string, string>,
  spec: ResourceQuota['spec'] = {},
): ResourceQuota {
  return {
    metadata: { name: 'q', namespace: 'ns', resourceVersion: '5' },
    spec: { hard, ...spec },
    status: { hard, used },
  };
}

const create = (object: Pod | ResourceQuota) =>
  ({ operation: 'CREATE', subresource: '', object, now: Date.now() }) as const;

describe('pod requests, limits and QoS', () => {
  it('sums containers, takes the largest init container with the sidecars before it, and adds the overhead', () => {
    const spec = pod({
      containers: [
        { name: 'a', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } },
        { name: 'b', resources: { requests: { cpu: '300m', memory: '1Gi' } } },
      ],
      initContainers: [
        { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
        { name: 'big', resources: { requests: { cpu: '1' } } },
      ],
      overhead: { cpu: '10m', memory: '1Mi' },
    }).spec;
    expect(resourceListOf(podRequests(spec))).toEqual({ cpu: '1060m', memory: '1025Mi' });
    expect(resourceListOf(podRequests(spec, { excludeOverhead: true }))).toEqual({ cpu: '1050m', memory: '1Gi' });
    expect(resourceListOf(podLimits(spec))).toEqual({ cpu: '210m' });
  });

  it('classifies QoS as Kubernetes', () => {
    expect(computePodQos(pod({ containers: [{ name: 'a' }] }).spec)).toBe('BestEffort');
    const both = { cpu: '1', memory: '1Gi' };
    expect(computePodQos(pod({ containers: [{ name: 'a', resources: { requests: both, limits: both } }] }).spec)).toBe(
      'Guaranteed',
    );
    expect(computePodQos(pod({ containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }] }).spec)).toBe(
      'Burstable',
    );
  });
});

describe('quota evaluation', () => {
  it('charges a pod and refuses one that would exceed, in Kubernetes words', () => {
    const e = quotaEvaluatorFor('', 'pods');
    const q = quota({ pods: '2', 'requests.cpu': '1' }, { pods: '1', 'requests.cpu': '500m' });
    const ok = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '250m' } } }] });
    const [charged] = checkQuotaRequest([q], e, create(ok));
    expect(charged?.status?.used).toEqual({ pods: '2', 'requests.cpu': '750m' });
    const big = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '600m' } } }] });
    expect(() => checkQuotaRequest([q], e, create(big))).toThrow(
      new QuotaRejection(
        'exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1',
        true,
      ),
    );
    expect(() => checkQuotaRequest([q], e, create(pod({ containers: [{ name: 'c' }, { name: 'd' }] })))).toThrow(
      'failed quota: q: must specify requests.cpu for: c,d',
    );
    const unknown = quota({ pods: '2' }, {});
    expect(() => checkQuotaRequest([unknown], e, create(ok))).toThrow('status unknown for quota: q, resources: pods');
  });

  it('matches scopes: BestEffort, Terminating, PriorityClass selectors', () => {
    const e = quotaEvaluatorFor('', 'pods');
    const bestEffort = quota({ pods: '0' }, { pods: '0' }, { scopes: ['BestEffort'] });
    expect(() => checkQuotaRequest([bestEffort], e, create(pod({ containers: [{ name: 'c' }] })))).toThrow(
      'exceeded quota',
    );
    const burstable = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '1m' } } }] });
    expect(checkQuotaRequest([bestEffort], e, create(burstable))[0]).toEqual(bestEffort);
    const high = quota(
      { pods: '0' },
      { pods: '0' },
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
    );
    expect(() => checkQuotaRequest([high], e, create(pod({ priorityClassName: 'high' })))).toThrow('exceeded quota');
    expect(checkQuotaRequest([high], e, create(pod({ priorityClassName: 'low' })))[0]).toEqual(high);
  });

  it('charges only the growth of an update', () => {
    const e = quotaEvaluatorFor('', 'services');
    const q = quota({ 'services.nodeports': '2' }, { 'services.nodeports': '1' });
    const svc = (type: string) => ({
      metadata: { name: 's', namespace: 'ns', resourceVersion: '3' },
      spec: { type, ports: [{ port: 80 }, { port: 81 }] },
    });
    expect(() =>
      checkQuotaRequest([q], e, {
        ...create(svc('NodePort') as never),
        operation: 'UPDATE',
        oldObject: svc('ClusterIP'),
      }),
    ).toThrow(
      'exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=2',
    );
  });

  it('counts objects by count/<resource>.<group> and recalculates usage for the controller', () => {
    expect(trackedGroupResources(['count/deployments.apps', 'requests.cpu', 'configmaps'])).toEqual([
      { group: '', resource: 'pods' },
      { group: '', resource: 'configmaps' },
      { group: 'apps', resource: 'deployments' },
    ]);
    const q = quota({ 'count/deployments.apps': '5', pods: '10', 'requests.memory': '1Gi' }, {});
    const pods = [
      pod({ containers: [{ name: 'c', resources: { requests: { memory: '256Mi' } } }] }),
      pod({ containers: [{ name: 'c', resources: { requests: { memory: '256Mi' } } }] }, { phase: 'Succeeded' }),
    ];
    const { used } = calculateQuotaUsage(q, {
      objectsOf: (g, r) => (r === 'pods' ? pods : g === 'apps' ? [{ metadata: {} }, { metadata: {} }] : []),
      now: Date.now(),
    });
    expect(resourceListOf(used)).toEqual({ pods: '1', 'requests.memory': '256Mi', 'count/deployments.apps': '2' });
  });
});
