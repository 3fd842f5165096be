import { fieldErrorMessage, type ValidatingAdmissionPolicy, type ValidatingAdmissionPolicyBinding } from '@svc/api';
import { validateBinding, validatePolicy } from './validation.js';

const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }];

function policy(spec: NonNullable<ValidatingAdmissionPolicy['spec']>): ValidatingAdmissionPolicy {
  return {
    apiVersion: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: rules },
      ...spec,
    },
  };
}

const messages = (errs: ReturnType<typeof validatePolicy>): string[] => errs.map(fieldErrorMessage);

describe('ValidatingAdmissionPolicy validation', () => {
  it('accepts a policy whose expressions compile', () => {
    const p = policy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      variables: [
        { name: 'keys', expression: 'object.data.size()' },
        { name: 'many', expression: 'variables.keys > 2' },
      ],
      validations: [
        { expression: '!variables.many', messageExpression: '"too many: " + string(variables.keys)' },
        { expression: "has(object.data) && object.data.all(k, k.startsWith('a'))", reason: 'Forbidden' },
        { expression: "authorizer.group('').resource('pods').check('get').allowed()" },
        { expression: 'params.data.max == "1"' },
      ],
      matchConditions: [{ name: 'not-kube', expression: "request.namespace != 'kube-system'" }],
      auditAnnotations: [{ key: 'size', valueExpression: 'string(object.data.size())' }],
    });
    expect(messages(validatePolicy(p))).toEqual([]);
  });

  it('reports what does not compile, with the path and cel-go layout', () => {
    const p = policy({
      validations: [
        { expression: 'object.data.size() >' },
        { expression: 'params.x == 1' },
        { expression: 'object.data.size()' },
        { expression: 'true', messageExpression: 'authorizer.path("/x").check("get").allowed() ? "a" : "b"' },
        { expression: 'true', messageExpression: '1' },
      ],
    });
    const m = messages(validatePolicy(p));
    expect(m[0]).toMatch(
      /^spec\.validations\[0\]\.expression: Invalid value: "object\.data\.size\(\) >": compilation failed: ERROR: <input>:1:/,
    );
    expect(m[1]).toContain(
      `spec.validations[1].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^`,
    );
    expect(m[2]).toBe(
      'spec.validations[2].expression: Invalid value: "object.data.size()": must evaluate to bool but got int',
    );
    expect(m[3]).toContain("undeclared reference to 'authorizer'");
    expect(m[4]).toBe('spec.validations[4].messageExpression: Invalid value: "1": must evaluate to string but got int');
    expect(m).toHaveLength(5);
  });

  it('checks required fields, enums and names as Kubernetes', () => {
    const p: ValidatingAdmissionPolicy = {
      apiVersion: 'v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'p' },
      spec: {
        failurePolicy: 'Sometimes',
        matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} },
        validations: [{ expression: 'true', reason: 'Unauthorized', message: 'a\nb' }],
        variables: [{ name: 'in', expression: '1' }],
        matchConditions: [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'variables.x' },
        ],
      },
    };
    expect(messages(validatePolicy(p))).toEqual([
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      'spec.matchConstraints.resourceRules: Required value',
      `spec.matchConditions[1].expression: Invalid value: "variables.x": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^`,
      'spec.matchConditions[1].name: Duplicate value: "a"',
      'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
      'spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks',
      'spec.validations[0].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    ]);
  });

  it('needs validations or auditAnnotations', () => {
    expect(messages(validatePolicy(policy({})))).toEqual([
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
    ]);
  });
});

describe('ValidatingAdmissionPolicyBinding validation', () => {
  const binding = (spec: ValidatingAdmissionPolicyBinding['spec']): ValidatingAdmissionPolicyBinding => ({
    apiVersion: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'b' },
    spec,
  });

  it('requires policyName and validationActions, unique and not both Deny and Warn', () => {
    expect(messages(validateBinding(binding({})))).toEqual([
      'spec.policyName: Required value',
      'spec.validationActions: Required value: at least one validation action is required',
    ]);
    expect(
      messages(validateBinding(binding({ policyName: 'p', validationActions: ['Deny', 'Warn', 'Deny', 'Log'] }))),
    ).toEqual([
      'spec.validationActions[2]: Duplicate value: "Deny"',
      'spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
      'spec.validationActions: Invalid value: ["Deny","Warn","Deny","Log"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ]);
  });

  it('checks paramRef', () => {
    const errs = validateBinding(
      binding({ policyName: 'p', validationActions: ['Deny'], paramRef: { name: 'x', selector: {} } }),
    );
    expect(messages(errs)).toEqual([
      'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.parameterNotFoundAction: Required value',
    ]);
    expect(messages(validateBinding(binding({ policyName: 'p', validationActions: ['Audit'], paramRef: {} })))).toEqual(
      [
        'spec.paramRef: Required value: one of name or selector must be specified',
        'spec.paramRef.parameterNotFoundAction: Required value',
      ],
    );
  });
});
