import { builtinCatalog, group, type ObjectSchema } from '@svc/api';
import { decodeMessage, decodeProtobufObject, encodeMessage, encodeProtobufObject } from '@svc/machinery';
import { namedRuleWithOperations } from './match-resources.js';

const catalog = builtinCatalog();
const schemaOf = (plural: string): ObjectSchema =>
  catalog.lookup(group('admissionregistration'), 'v1', plural)?.schema as ObjectSchema;

const rule = {
  resourceNames: ['a'],
  operations: ['CREATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['x'],
  scope: '*',
};

describe('admissionregistration/v1 policies in Protobuf', () => {
  it('nests Rule in RuleWithOperations in NamedRuleWithOperations, as Go inlines them', () => {
    const bytes = Buffer.from(encodeMessage(rule, namedRuleWithOperations));
    const ruleMsg = [0x0a, 0x00, 0x12, 0x02, 0x76, 0x31, 0x1a, 0x01, 0x78, 0x22, 0x01, 0x2a];
    const withOps = [0x0a, 0x06, ...Buffer.from('CREATE'), 0x12, ruleMsg.length, ...ruleMsg];
    expect([...bytes]).toEqual([0x0a, 0x01, 0x61, 0x12, withOps.length, ...withOps]);
    expect(decodeMessage(bytes, namedRuleWithOperations)).toEqual(rule);
  });

  it('round-trips a policy and a binding', () => {
    const policy = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'p', generation: 2 },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          namespaceSelector: { matchLabels: { a: 'b' } },
          objectSelector: {},
          resourceRules: [rule],
          excludeResourceRules: [{ ...rule, resourceNames: undefined }],
          matchPolicy: 'Equivalent',
        },
        validations: [{ expression: 'true', message: 'm', reason: 'Forbidden', messageExpression: '"x"' }],
        failurePolicy: 'Fail',
        auditAnnotations: [{ key: 'k', valueExpression: '"v"' }],
        matchConditions: [{ name: 'c', expression: 'true' }],
        variables: [{ name: 'v', expression: '1' }],
      },
      status: {
        observedGeneration: 2,
        typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'w' }] },
      },
    };
    const binding = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'b' },
      spec: {
        policyName: 'p',
        paramRef: { name: 'x', namespace: 'y', parameterNotFoundAction: 'Deny' },
        matchResources: { resourceRules: [rule] },
        validationActions: ['Warn', 'Audit'],
      },
    };
    for (const [obj, plural] of [
      [policy, 'validatingadmissionpolicies'],
      [binding, 'validatingadmissionpolicybindings'],
    ] as const) {
      const schema = schemaOf(plural);
      const bytes = encodeProtobufObject(obj, schema, { apiVersion: obj.apiVersion, kind: obj.kind });
      // An empty or absent list is the same in Protobuf.
      expect(decodeProtobufObject(bytes, schema)).toEqual(JSON.parse(JSON.stringify(obj)));
    }
  });

  it('prints the columns kubectl shows', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    const cells = (plural: string, o: Record<string, unknown>) =>
      catalog
        .lookup(group('admissionregistration'), 'v1', plural)
        ?.tableColumns?.map((c) =>
          c.cell({ metadata: { name: 'n', creationTimestamp: '2026-01-01T00:00:00Z' }, ...o }, now),
        );
    expect(
      cells('validatingadmissionpolicies', {
        spec: { validations: [{}, {}, {}], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } },
      }),
    ).toEqual(['n', 3, 'v1/ConfigMap', '10m']);
    expect(cells('validatingadmissionpolicies', { spec: {} })).toEqual(['n', 0, '<unset>', '10m']);
    expect(cells('validatingadmissionpolicybindings', { spec: { policyName: 'p', paramRef: { name: 'x' } } })).toEqual([
      'n',
      'p',
      '*/x',
      '10m',
    ]);
    expect(
      cells('validatingadmissionpolicybindings', {
        spec: {
          policyName: 'p',
          paramRef: {
            selector: {
              matchLabels: { b: '2', a: '1' },
              matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }],
            },
          },
        },
      })?.[2],
    ).toBe(
      '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
    );
  });
});
