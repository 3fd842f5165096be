// The horizontal-pod-autoscaler's replica computation (Kubernetes 1.32's replica calculator,
// several cases after its replica_calculator_test.go) and normalization (stabilization window,
// min/max and scale-up limits, behavior policies over past scale events).
import type { HPAScalingRules, Pod } from '@svc/api';
import { ScalingHistory } from './hpa-normalize.js';
import {
  rawResourceReplicas,
  resourceReplicas,
  type CalculatorSettings,
  type PodMetrics,
} from './hpa-replica-calculator.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const HOUR_AGO = new Date(NOW - 3_600_000).toISOString();
const S: CalculatorSettings = { tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 };

/** Pods p0..pn-1, each one container requesting `requests[i]` millicores; Running and Ready unless said. */
function podsOf(requests: number[], o: { unready?: number[]; pending?: number[]; deleted?: number[] } = {}): Pod[] {
  return requests.map((r, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `p${i}`,
      namespace: 'ns',
      ...(o.deleted?.includes(i) ? { deletionTimestamp: HOUR_AGO } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${r}m`, memory: '100Mi' } } }] },
    status: {
      phase: o.pending?.includes(i) ? 'Pending' : 'Running',
      startTime: HOUR_AGO,
      conditions: [{ type: 'Ready', status: o.unready?.includes(i) ? 'False' : 'True', lastTransitionTime: HOUR_AGO }],
    },
  }));
}

/** Metrics for pods p<i> with the given values (undefined: none). */
function metricsOf(values: Array<number | undefined>): PodMetrics {
  const m: PodMetrics = new Map();
  values.forEach((v, i) => {
    if (v !== undefined) m.set(`p${i}`, { value: v, timestampMs: NOW - 1000, windowMs: 15_000 });
  });
  return m;
}

function cpu(o: { current: number; pods: Pod[]; metrics: PodMetrics; target: number }) {
  return resourceReplicas(
    { currentReplicas: o.current, resource: 'cpu', pods: o.pods, metrics: o.metrics, nowMs: NOW },
    { targetUtilization: o.target, s: S },
  );
}

describe('replica calculator (resource utilization)', () => {
  it('scales up and down by the utilization ratio', () => {
    // Kubernetes' TestReplicaCalcScaleUp and TestReplicaCalcScaleDown.
    expect(
      cpu({ current: 3, pods: podsOf([1000, 1000, 1000]), metrics: metricsOf([300, 500, 700]), target: 30 }),
    ).toEqual({
      replicas: 5,
      utilization: 50,
      rawAverage: 500,
    });
    expect(
      cpu({
        current: 5,
        pods: podsOf([1000, 1000, 1000, 1000, 1000]),
        metrics: metricsOf([100, 300, 500, 250, 250]),
        target: 50,
      }),
    ).toEqual({ replicas: 3, utilization: 28, rawAverage: 280 });
  });

  it('keeps the count within the tolerance', () => {
    expect(
      cpu({ current: 3, pods: podsOf([1000, 1000, 1000]), metrics: metricsOf([1010, 1030, 1020]), target: 100 })
        .replicas,
    ).toBe(3);
  });

  it('counts unready pods as 0 % on a scale-up (TestReplicaCalcScaleUpUnreadyLessScale)', () => {
    const r = cpu({
      current: 3,
      pods: podsOf([1000, 1000, 1000], { unready: [0] }),
      metrics: metricsOf([300, 500, 700]),
      target: 30,
    });
    expect(r).toEqual({ replicas: 4, utilization: 60, rawAverage: 600 });
  });

  it('ignores deleted pods and counts pending ones as unready', () => {
    const r = cpu({
      current: 4,
      pods: podsOf([1000, 1000, 1000, 1000], { deleted: [3], pending: [2] }),
      metrics: metricsOf([500, 500, undefined, 9000]),
      target: 50,
    });
    expect(r.utilization).toBe(50);
    expect(r.replicas).toBe(4);
  });

  it('counts missing pods as 0 % on a scale-up and as 100 % on a scale-down, never flipping the direction', () => {
    // Scale-up: 200 % over the reporting pod; with the missing one at 0 %, 100 % over two → 4.
    expect(cpu({ current: 2, pods: podsOf([1000, 1000]), metrics: metricsOf([2000]), target: 50 }).replicas).toBe(4);
    // Equal: no change (TestReplicaCalcMissingMetricsNoChangeEq).
    expect(cpu({ current: 2, pods: podsOf([1000, 1000]), metrics: metricsOf([1000]), target: 100 }).replicas).toBe(2);
    // Scale-down at 10 %: the two missing pods at 100 % make it 55 % > 50 %: the direction flips, no change.
    expect(
      cpu({ current: 4, pods: podsOf([1000, 1000, 1000, 1000]), metrics: metricsOf([100, 100]), target: 50 }).replicas,
    ).toBe(4);
    // Scale-down at 10 % with one missing pod of three: (100+100+1000)/3000 = 40 % → ceil(0.8 × 3) = 3.
    expect(
      cpu({ current: 3, pods: podsOf([1000, 1000, 1000]), metrics: metricsOf([100, 100]), target: 50 }).replicas,
    ).toBe(3);
  });

  it("fails as Kubernetes' calculator does", () => {
    expect(() => cpu({ current: 1, pods: [], metrics: metricsOf([1]), target: 50 })).toThrow(
      'no pods returned by selector while calculating replica count',
    );
    expect(() =>
      cpu({ current: 1, pods: podsOf([1000], { unready: [0] }), metrics: metricsOf([1]), target: 50 }),
    ).toThrow('did not receive metrics for targeted pods (pods might be unready)');
    const noRequest = podsOf([1000]);
    delete noRequest[0]?.spec?.containers[0]?.resources;
    expect(() => cpu({ current: 1, pods: noRequest, metrics: metricsOf([1]), target: 50 })).toThrow(
      'missing request for cpu in container c of Pod p0',
    );
  });

  it('scales on an average value (memory, milli-bytes)', () => {
    const mi = 1024 * 1024 * 1000;
    const r = rawResourceReplicas(
      {
        currentReplicas: 2,
        resource: 'memory',
        pods: podsOf([1, 1]),
        metrics: metricsOf([200 * mi, 400 * mi]),
        nowMs: NOW,
      },
      { targetAverage: 100 * mi, s: S },
    );
    expect(r).toEqual({ replicas: 6, rawAverage: 300 * mi });
  });
});

describe('normalization', () => {
  const base = { key: 'ns/h', minReplicas: 1, maxReplicas: 10, nowMs: NOW };

  it('without a behavior: at most max(2 × current, 4), within min and max', () => {
    const h = new ScalingHistory(300_000);
    expect(h.normalize({ ...base, currentReplicas: 1, desiredReplicas: 10 })).toMatchObject({
      replicas: 4,
      limited: true,
      limitReason: 'ScaleUpLimit',
    });
    expect(h.normalize({ ...base, key: 'b', currentReplicas: 8, desiredReplicas: 30 })).toMatchObject({
      replicas: 10,
      limitReason: 'TooManyReplicas',
    });
    expect(h.normalize({ ...base, key: 'c', currentReplicas: 3, desiredReplicas: 4 })).toMatchObject({
      replicas: 4,
      ableReason: 'ReadyForNewScale',
      limited: false,
      limitReason: 'DesiredWithinRange',
    });
  });

  it('keeps the highest recommendation of the downscale window', () => {
    const h = new ScalingHistory(300_000);
    h.recordInitial('ns/h', 5, NOW);
    expect(h.normalize({ ...base, currentReplicas: 5, desiredReplicas: 2, nowMs: NOW + 10_000 })).toMatchObject({
      replicas: 5,
      ableReason: 'ScaleDownStabilized',
    });
    expect(h.normalize({ ...base, currentReplicas: 5, desiredReplicas: 2, nowMs: NOW + 301_000 })).toMatchObject({
      replicas: 2,
      ableReason: 'ReadyForNewScale',
      limitReason: 'DesiredWithinRange',
    });
  });

  const defaultUp: HPAScalingRules = {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };

  it("with a behavior: the policies' largest change, over the period's scale events", () => {
    const h = new ScalingHistory(300_000);
    const behavior = {
      scaleUp: defaultUp,
      scaleDown: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max' as const,
        policies: [{ type: 'Percent' as const, value: 50, periodSeconds: 60 }],
      },
    };
    expect(h.normalize({ ...base, maxReplicas: 50, currentReplicas: 2, desiredReplicas: 20, behavior })).toMatchObject({
      replicas: 6,
      limitReason: 'ScaleUpLimit',
    });
    const down = { ...base, key: 'd', currentReplicas: 10, desiredReplicas: 1, behavior };
    expect(h.normalize(down)).toMatchObject({ replicas: 5, limitReason: 'ScaleDownLimit' });
    h.storeScaleEvent({ key: 'd', behavior, from: 10, to: 5, nowMs: NOW });
    // Within the policy's 60 s the period started at 10: half of it is already gone.
    expect(h.normalize({ ...down, currentReplicas: 5, nowMs: NOW + 20_000 })).toMatchObject({ replicas: 5 });
    expect(h.normalize({ ...down, currentReplicas: 5, nowMs: NOW + 61_000 })).toMatchObject({ replicas: 2 });
    const disabled = { ...behavior, scaleUp: { ...defaultUp, selectPolicy: 'Disabled' as const } };
    expect(
      h.normalize({ ...base, key: 'e', currentReplicas: 3, desiredReplicas: 9, behavior: disabled }).replicas,
    ).toBe(3);
  });

  it('stabilizes a scale-up within its window', () => {
    const h = new ScalingHistory(300_000);
    const behavior = {
      scaleUp: { ...defaultUp, stabilizationWindowSeconds: 60 },
      scaleDown: {
        ...defaultUp,
        policies: [{ type: 'Percent' as const, value: 100, periodSeconds: 15 }],
        stabilizationWindowSeconds: 0,
      },
    };
    h.recordInitial('ns/h', 2, NOW);
    expect(h.normalize({ ...base, currentReplicas: 2, desiredReplicas: 4, behavior, nowMs: NOW + 1000 })).toMatchObject(
      {
        replicas: 2,
        ableReason: 'ScaleUpStabilized',
      },
    );
  });
});
