// LimitRange, ResourceQuota, PriorityClass and RuntimeClass in Protobuf: Kubernetes' field
// numbers (generated.proto) checked on the bytes, and every field through a round trip.
import { builtinCatalog, group, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject, encodeMessage, encodeProtobufObject } from '@svc/machinery';

const catalog = builtinCatalog();
const schemaOf = (g: string, plural: string): ObjectSchema => catalog.lookup(g, 'v1', plural)?.schema as ObjectSchema;

function roundTrip(obj: Record<string, unknown>, schema: ObjectSchema): Record<string, unknown> {
  const bytes = encodeProtobufObject(obj, schema, { apiVersion: String(obj.apiVersion), kind: String(obj.kind) });
  return decodeProtobufObject(bytes, schema);
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const text = (s: string): string => Buffer.from(s).toString('hex');

describe('Protobuf of the quota and class types', () => {
  it("puts PriorityClass fields at Kubernetes' numbers", () => {
    const bytes = encodeMessage(
      { value: 1000, globalDefault: true, description: 'd', preemptionPolicy: 'Never' },
      schemaOf(group('scheduling'), 'priorityclasses'),
    );
    // value 2 (varint 1000), globalDefault 3, description 4, preemptionPolicy 5.
    expect(hex(bytes)).toBe(`10e807` + `1801` + `2201${text('d')}` + `2a05${text('Never')}`);
  });

  it("puts RuntimeClass and ResourceQuota fields at Kubernetes' numbers", () => {
    const rc = encodeMessage({ handler: 'kata' }, schemaOf(group('node'), 'runtimeclasses'));
    expect(hex(rc)).toBe(`1204${text('kata')}`);
    const q = encodeMessage({ spec: { scopes: ['BestEffort'] } }, schemaOf('', 'resourcequotas'));
    // spec 2 { scopes 2 }.
    expect(hex(q)).toBe(`120c120a${text('BestEffort')}`);
  });

  it('round-trips every field', () => {
    const lr = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'l', namespace: 'ns' },
      spec: {
        limits: [
          {
            type: 'Container',
            max: { cpu: '2' },
            min: { cpu: '100m' },
            default: { memory: '1Gi' },
            defaultRequest: { memory: '512Mi' },
            maxLimitRequestRatio: { cpu: '4' },
          },
        ],
      },
    };
    expect(roundTrip(lr, schemaOf('', 'limitranges'))).toEqual(lr);
    const q = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q', namespace: 'ns' },
      spec: {
        hard: { pods: '2', 'count/deployments.apps': '1' },
        scopes: ['NotTerminating'],
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
      status: { hard: { pods: '2' }, used: { pods: '1' } },
    };
    expect(roundTrip(q, schemaOf('', 'resourcequotas'))).toEqual(q);
    const rc = {
      apiVersion: `${group('node')}/v1`,
      kind: 'RuntimeClass',
      metadata: { name: 'kata' },
      handler: 'kata',
      overhead: { podFixed: { cpu: '250m' } },
      scheduling: {
        nodeSelector: { sandbox: 'kata' },
        tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 30 }],
      },
    };
    expect(roundTrip(rc, schemaOf(group('node'), 'runtimeclasses'))).toEqual(rc);
  });
});
