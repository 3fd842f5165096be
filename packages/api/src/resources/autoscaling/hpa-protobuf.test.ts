// HorizontalPodAutoscaler in Protobuf (Kubernetes' autoscaling/v1 and v2 field numbers checked
// on the bytes, every field through a round trip) and the v1 <-> v2 conversion.
import { hpaV1ToV2, hpaV2ToV1, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject, encodeMessage, encodeProtobufObject } from '@svc/machinery';
import { horizontalPodAutoscalerV1 } from './v1/horizontal-pod-autoscaler.js';
import { horizontalPodAutoscalerV2 } from './v2/horizontal-pod-autoscaler.js';

const schemaOf = (version: string): ObjectSchema =>
  (version === 'v1' ? horizontalPodAutoscalerV1() : horizontalPodAutoscalerV2()).schema as ObjectSchema;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const text = (s: string): string => Buffer.from(s).toString('hex');

const v2 = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'h', namespace: 'ns' },
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 2,
    maxReplicas: 9,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      {
        type: 'ContainerResource',
        containerResource: { name: 'memory', container: 'c', target: { type: 'AverageValue', averageValue: '100Mi' } },
      },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      {
        type: 'Object',
        object: {
          describedObject: { kind: 'Service', name: 's', apiVersion: 'v1' },
          metric: { name: 'hits', selector: { matchLabels: { a: 'b' } } },
          target: { type: 'Value', value: '2k' },
        },
      },
      {
        type: 'External',
        external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } },
      },
    ],
    behavior: {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }],
      },
      scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    },
  },
  status: {
    observedGeneration: 3,
    lastScaleTime: '2026-11-27T10:00:00Z',
    currentReplicas: 2,
    desiredReplicas: 3,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 75, averageValue: '150m' } } },
    ],
    conditions: [
      {
        type: 'AbleToScale',
        status: 'True',
        lastTransitionTime: '2026-11-27T10:00:00Z',
        reason: 'ReadyForNewScale',
        message: 'm',
      },
    ],
  },
};

describe('HorizontalPodAutoscaler Protobuf and conversion', () => {
  it("puts v1 and v2 fields at Kubernetes' numbers", () => {
    // v1 spec 2 { scaleTargetRef 1 { kind 1 }, minReplicas 2, maxReplicas 3, targetCPUUtilizationPercentage 4 }.
    const v1 = encodeMessage(
      { spec: { scaleTargetRef: { kind: 'D' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 } },
      schemaOf('v1'),
    );
    expect(hex(v1)).toBe(`120b0a030a01${text('D')}` + '1001' + '1805' + '2032');
    // v2 spec 2 { metrics 4 { type 1, resource 4 { name 1, target 2 { type 1, averageUtilization 4 } } } }.
    const m = encodeMessage(
      {
        spec: {
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } } },
          ],
        },
      },
      schemaOf('v2'),
    );
    const target = `0a0b${text('Utilization')}2005`;
    const resource = `0a03${text('cpu')}120f${target}`;
    const metric = `0a08${text('Resource')}2216${resource}`;
    expect(hex(m)).toBe(`12242222${metric}`);
    // v2 status 3 { currentMetrics 5, conditions 6 }; behavior 5 { scaleUp 1 { selectPolicy 1, policies 2, window 3 } }.
    const b = encodeMessage({ spec: { behavior: { scaleUp: { stabilizationWindowSeconds: 7 } } } }, schemaOf('v2'));
    expect(hex(b)).toBe('1206' + '2a04' + '0a02' + '1807');
  });

  it('round-trips every field of v2 and v1', () => {
    const enc = (o: Record<string, unknown>, version: string) =>
      decodeProtobufObject(
        encodeProtobufObject(o, schemaOf(version), {
          apiVersion: String(o.apiVersion),
          kind: 'HorizontalPodAutoscaler',
        }),
        schemaOf(version),
      );
    expect(enc(v2, 'v2')).toEqual(v2);
    const v1 = hpaV2ToV1(v2);
    expect(enc(v1, 'v1')).toEqual(v1);
  });

  it('converts v2 to v1 and back without loss (the annotations carry the rest)', () => {
    const v1 = hpaV2ToV1(v2) as unknown as { spec: Record<string, unknown>; status: Record<string, unknown> };
    expect(v1.spec.targetCPUUtilizationPercentage).toBe(50);
    expect(v1.status.currentCPUUtilizationPercentage).toBe(75);
    expect(hpaV1ToV2(hpaV2ToV1(v2))).toEqual(v2);
  });
});
