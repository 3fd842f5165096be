import {
  builtinCatalog,
  group,
  isStatusError,
  type ApiObject,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
  type ValidatingAdmissionPolicySpec,
} from '@svc/api';
import type { AdmissionAttributes } from '../admission.js';
import type { AuthorizationAttributes, Authorizer } from '../../authz/authorizer.js';
import type { StoreInformer } from '../../authz/rbac/informer.js';
import { compilePolicy } from './compiled-policy.js';
import { dispatch, type PolicyHook } from './dispatcher.js';
import type { ParamSource } from './params.js';

const catalog = builtinCatalog();
const configMaps = catalog.lookup('', 'v1', 'configmaps');
if (!configMaps) throw new Error('no configmaps');

const asked: AuthorizationAttributes[] = [];
const authorizer: Authorizer = {
  authorize: async (a) => {
    asked.push(a);
    return { decision: a.verb === 'get' && a.resource === 'pods' ? 'allow' : 'noOpinion', reason: 'because' };
  },
};

const namespace: ApiObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', uid: 'ns-uid', labels: { env: 'prod' }, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
};

function attrs(o: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  const object: ApiObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'team-a', labels: { app: 'web' } },
    data: { a: '1', b: '2' },
  };
  return {
    operation: 'CREATE',
    resource: configMaps as NonNullable<typeof configMaps>,
    subresource: '',
    namespace: 'team-a',
    name: 'cm',
    object,
    dryRun: false,
    user: { name: 'alice', uid: 'u1', groups: ['devs', 'system:authenticated'] },
    warnings: [],
    annotations: {},
    ...o,
  };
}

const rules = [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }];

function hook(
  spec: ValidatingAdmissionPolicySpec,
  o: { actions?: string[]; bindings?: ValidatingAdmissionPolicyBinding[]; params?: ParamSource } = {},
): PolicyHook {
  const policy: ValidatingAdmissionPolicy = {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: rules },
      ...spec,
    },
  };
  const binding: ValidatingAdmissionPolicyBinding = {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'b' },
    spec: { policyName: 'p', validationActions: o.actions ?? ['Deny'] },
  };
  return { policy, bindings: o.bindings ?? [binding], compiled: compilePolicy(policy), params: o.params };
}

const deps = { catalog, authorizer, namespace: (n: string) => (n === 'team-a' ? namespace : undefined) };

async function run(h: PolicyHook, a = attrs()): Promise<{ a: AdmissionAttributes; error?: unknown }> {
  try {
    await dispatch(a, { hooks: [h], deps });
    return { a };
  } catch (error) {
    return { a, error };
  }
}

function statusOf(e: unknown) {
  if (!isStatusError(e)) throw new Error(`not a Status error: ${String(e)}`);
  return e.status;
}

describe('dispatch', () => {
  it('sees request, namespaceObject, oldObject and the authorizer as Kubernetes builds them', async () => {
    const old: ApiObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '0' } };
    const h = hook({
      validations: [
        { expression: "request.operation == 'UPDATE' && request.userInfo.username == 'alice'" },
        { expression: "request.namespace == 'team-a' && request.name == 'cm' && request.kind.kind == 'ConfigMap'" },
        { expression: "request.resource.resource == 'configmaps' && request.requestResource.version == 'v1'" },
        { expression: "'devs' in request.userInfo.groups && request.dryRun == false" },
        { expression: "namespaceObject.metadata.labels.env == 'prod' && namespaceObject.status.phase == 'Active'" },
        { expression: "oldObject.data.a == '0' && object.data.a == '1'" },
        { expression: "authorizer.group('').resource('pods').namespace('team-a').check('get').allowed()" },
        { expression: "!authorizer.requestResource.check('delete').allowed()" },
        { expression: "authorizer.path('/healthz').check('get').reason() == 'because'" },
      ],
    });
    const { error } = await run(h, attrs({ operation: 'UPDATE', oldObject: old }));
    expect(error).toBeUndefined();
    expect(asked.map((a) => [a.verb, a.resource, a.namespace, a.name, a.path, a.user.name])).toEqual(
      expect.arrayContaining([
        ['get', 'pods', 'team-a', '', '', 'alice'],
        ['delete', 'configmaps', 'team-a', 'cm', '', 'alice'],
        ['get', '', '', '', '/healthz', 'alice'],
      ]),
    );
  });

  it('denies with the first failure; Warn warns; Audit annotates in Kubernetes words', async () => {
    const h = hook({
      validations: [{ expression: 'true' }, { expression: 'size(object.data) < 2', message: 'too big' }],
    });
    const { error } = await run(h);
    expect(statusOf(error)).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: too big`,
    });
    const warned = await run(hook(h.policy.spec ?? {}, { actions: ['Warn', 'Audit'] }));
    expect(warned.error).toBeUndefined();
    expect(warned.a.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': too big",
    ]);
    expect(warned.a.annotations).toEqual({
      [`${group('validation.policy.admission')}/validation_failure`]:
        '[{"message":"too big","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Warn","Audit"]}]',
    });
  });

  it('publishes auditAnnotations under <policy>/<key>; null and blank values are left out', async () => {
    const h = hook({
      auditAnnotations: [
        { key: 'size', valueExpression: "'keys: ' + string(size(object.data))" },
        { key: 'none', valueExpression: 'null' },
        { key: 'blank', valueExpression: "'  '" },
      ],
    });
    const { a, error } = await run(h);
    expect(error).toBeUndefined();
    expect(a.annotations).toEqual({ 'p/size': 'keys: 2' });
  });

  it('evaluates variables once, lazily, and those calling the authorizer before the rest', async () => {
    asked.length = 0;
    const h = hook({
      variables: [
        { name: 'canGetPods', expression: "authorizer.group('').resource('pods').check('get').allowed()" },
        { name: 'keys', expression: 'size(object.data)' },
        { name: 'unused', expression: 'object.nope' },
      ],
      validations: [
        { expression: 'variables.canGetPods && variables.keys == 2' },
        { expression: 'variables.keys + variables.keys == 4' },
      ],
    });
    expect((await run(h)).error).toBeUndefined();
    expect(asked).toHaveLength(1);
    const failing = hook({
      variables: [{ name: 'missing', expression: 'object.nope' }],
      validations: [{ expression: 'variables.missing == 1' }],
    });
    expect(statusOf((await run(failing)).error).message).toBe(
      `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'variables.missing == 1' resulted in error: composited variable "missing" fails to evaluate: no such key: nope`,
    );
  });

  it('applies matchConditions: false skips, an error fails under Fail and skips under Ignore', async () => {
    const spec = {
      validations: [{ expression: 'false' }],
      matchConditions: [
        { name: 'web', expression: "object.metadata.labels.app == 'web'" },
        { name: 'broken', expression: 'object.nope == 1' },
      ],
    };
    const failed = await run(hook(spec));
    expect(statusOf(failed.error).message).toMatch(
      /denied request: expression 'object\.nope == 1' resulted in error: no such key: nope$/,
    );
    expect((await run(hook({ ...spec, failurePolicy: 'Ignore' }))).error).toBeUndefined();
    const skip = { ...spec, matchConditions: [{ name: 'db', expression: "object.metadata.labels.app == 'db'" }] };
    expect((await run(hook(skip))).error).toBeUndefined();
  });

  it('runs a binding once per param found and reports configuration errors by failurePolicy', async () => {
    const params = new Map<string, ApiObject>([
      [
        'team-a/low',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'low', namespace: 'team-a' }, data: { max: '1' } },
      ],
      [
        'team-a/high',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'high', namespace: 'team-a' }, data: { max: '5' } },
      ],
    ]);
    const informer = {
      synced: Promise.resolve(),
      get: (ns: string, name: string) => params.get(`${ns}/${name}`),
      list: () => params.values(),
    } as unknown as StoreInformer;
    const source: ParamSource = { namespaced: true, informer };
    const spec: ValidatingAdmissionPolicySpec = {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        { expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'max ' + params.data.max" },
      ],
    };
    const binding = (paramRef: object): ValidatingAdmissionPolicyBinding => ({
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'b' },
      spec: { policyName: 'p', validationActions: ['Deny'], paramRef },
    });
    const bySelector = hook(spec, {
      params: source,
      bindings: [binding({ selector: {}, parameterNotFoundAction: 'Deny' })],
    });
    expect(statusOf((await run(bySelector)).error).message).toMatch(/denied request: max 1$/);
    const byName = hook(spec, {
      params: source,
      bindings: [binding({ name: 'high', parameterNotFoundAction: 'Deny' })],
    });
    expect((await run(byName)).error).toBeUndefined();
    const missing = hook(spec, {
      params: source,
      bindings: [binding({ name: 'x', parameterNotFoundAction: 'Allow' })],
    });
    expect((await run(missing)).error).toBeUndefined();
    const denied = hook(spec, { params: source, bindings: [binding({ name: 'x', parameterNotFoundAction: 'Deny' })] });
    expect(statusOf((await run(denied)).error).message).toBe(
      "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    const unknown = {
      ...hook(spec),
      configurationError: new Error("failed to find resource referenced by paramKind: 'x/v1, Kind=Y'"),
    };
    expect(statusOf((await run(unknown)).error).message).toBe(
      "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'x/v1, Kind=Y'",
    );
    const ignored = { ...hook({ ...spec, failurePolicy: 'Ignore' }), configurationError: new Error('gone') };
    expect((await run(ignored)).error).toBeUndefined();
  });

  it('matches by namespace and object selectors, exclusions and resource names', async () => {
    const spec = (constraints: object): ValidatingAdmissionPolicySpec => ({
      validations: [{ expression: 'false', message: 'matched' }],
      matchConstraints: {
        matchPolicy: 'Equivalent',
        namespaceSelector: {},
        objectSelector: {},
        resourceRules: rules,
        ...constraints,
      },
    });
    const matched = async (constraints: object) => (await run(hook(spec(constraints)))).error !== undefined;
    expect(await matched({ namespaceSelector: { matchLabels: { env: 'prod' } } })).toBe(true);
    expect(await matched({ namespaceSelector: { matchLabels: { env: 'dev' } } })).toBe(false);
    expect(await matched({ objectSelector: { matchLabels: { app: 'web' } } })).toBe(true);
    expect(await matched({ objectSelector: { matchLabels: { app: 'db' } } })).toBe(false);
    expect(await matched({ excludeResourceRules: rules })).toBe(false);
    expect(await matched({ resourceRules: [{ ...rules[0], resourceNames: ['other'] }] })).toBe(false);
    expect(await matched({ resourceRules: [{ ...rules[0], scope: 'Cluster' }] })).toBe(false);
    expect(await matched({ resourceRules: [{ ...rules[0], operations: ['DELETE'] }] })).toBe(false);
  });
});
